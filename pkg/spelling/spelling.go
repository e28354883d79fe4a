// Package spelling finds the name someone most likely meant among the
// names there are: for errors that say "did you mean ...?".
package spelling

import "strings"

// maxEdits is how far a name may be from the one typed to be suggested:
// two edits catch a dropped, doubled or swapped letter without offering
// names that merely share a few.
const maxEdits = 2

// Closest is the candidate nearest to typed, ignoring case, and whether
// one is within two edits. Of equally near candidates the first wins.
func Closest(typed string, candidates []string) (string, bool) {
	best, bestDistance := "", maxEdits+1
	typed = strings.ToLower(typed)
	for _, c := range candidates {
		if d := Distance(strings.ToLower(c), typed); d < bestDistance {
			best, bestDistance = c, d
		}
	}
	return best, bestDistance <= maxEdits
}

// Distance is the Levenshtein distance of a and b, in bytes.
func Distance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
