package cellib

import (
	"crypto/sha256"
	"encoding/binary"

	"github.com/google/cel-go/cel"
	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/common/types/ref"
)

// seededAlphabet is what random.seededString draws from.
const seededAlphabet = "0123456789abcdefghijklmnopqrstuvwxyz"

// maxSeededLength bounds random.seededString: no object the API server
// stores holds a longer string, and an RGD must not make the agent allocate
// without limit.
const maxSeededLength = 1 << 20

// randomFunctions: random.seededString(length, seed) and
// random.seededInt(min, max, seed) derive a value from the SHA-256 of the
// seed (typically schema.metadata.uid), so it is the same on every
// reconcile. They give exactly the values kro gives, so that objects an
// RGD created under kro keep them when kro-agent takes the RGD over:
//
//   - seededString: character i is the big-endian uint32 at byte 4i mod 32
//     of the digest, modulo 36, in seededAlphabet. Eight 4-byte groups
//     fill the digest, so the characters repeat every eight: a longer
//     string has no more entropy than eight characters.
//   - seededInt: min + (the first 8 digest bytes as a big-endian uint64)
//     modulo (max - min), for min < max.
func randomFunctions() []cel.EnvOption {
	return []cel.EnvOption{
		cel.Function("random.seededString",
			cel.Overload("random_seededString_int_string", []*cel.Type{cel.IntType, cel.StringType}, cel.StringType,
				cel.BinaryBinding(func(length, seed ref.Val) ref.Val {
					n, ok := length.(types.Int)
					s, ok2 := seed.(types.String)
					if !ok || !ok2 {
						return types.MaybeNoSuchOverloadErr(length)
					}
					if n <= 0 || n > maxSeededLength {
						return types.NewErr("random.seededString: length must be between 1 and %d, not %d", maxSeededLength, n)
					}
					return types.String(seededString(int(n), string(s)))
				}))),
		cel.Function("random.seededInt",
			cel.Overload("random_seededInt_int_int_string", []*cel.Type{cel.IntType, cel.IntType, cel.StringType}, cel.IntType,
				cel.FunctionBinding(func(args ...ref.Val) ref.Val {
					lo, ok := args[0].(types.Int)
					hi, ok2 := args[1].(types.Int)
					s, ok3 := args[2].(types.String)
					if !ok || !ok2 || !ok3 {
						return types.MaybeNoSuchOverloadErr(args[0])
					}
					if lo >= hi {
						return types.NewErr("random.seededInt: min (%d) must be less than max (%d)", lo, hi)
					}
					return types.Int(seededInt(int64(lo), int64(hi), string(s)))
				}))),
	}
}

func seededString(n int, seed string) string {
	digest := sha256.Sum256([]byte(seed))
	out := make([]byte, n)
	for i := range out {
		at := (4 * i) % len(digest)
		out[i] = seededAlphabet[binary.BigEndian.Uint32(digest[at:at+4])%uint32(len(seededAlphabet))]
	}
	return string(out)
}

func seededInt(lo, hi int64, seed string) int64 {
	digest := sha256.Sum256([]byte(seed))
	// hi - lo wraps for the widest ranges; as unsigned it is still the size.
	size := uint64(hi - lo)
	return lo + int64(binary.BigEndian.Uint64(digest[:8])%size)
}
