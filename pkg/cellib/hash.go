package cellib

import (
	"crypto/md5"
	"crypto/sha256"
	"hash/fnv"

	"github.com/google/cel-go/cel"
	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/common/types/ref"
)

// hashFunctions: hash.fnv64a, hash.sha256 and hash.md5 of a string, as
// bytes; "%x".format([...]) or base64.encode(...) make text of them.
func hashFunctions() []cel.EnvOption {
	digest := func(name string, sum func([]byte) []byte) cel.EnvOption {
		return cel.Function("hash."+name,
			cel.Overload("hash_"+name+"_string", []*cel.Type{cel.StringType}, cel.BytesType,
				cel.UnaryBinding(func(v ref.Val) ref.Val {
					s, ok := v.(types.String)
					if !ok {
						return types.MaybeNoSuchOverloadErr(v)
					}
					return types.Bytes(sum([]byte(s)))
				})))
	}
	return []cel.EnvOption{
		digest("fnv64a", func(b []byte) []byte {
			h := fnv.New64a()
			h.Write(b)
			return h.Sum(nil)
		}),
		digest("sha256", func(b []byte) []byte {
			sum := sha256.Sum256(b)
			return sum[:]
		}),
		digest("md5", func(b []byte) []byte {
			sum := md5.Sum(b)
			return sum[:]
		}),
	}
}
