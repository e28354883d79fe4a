// Package quota recognises the API server's refusals of writes that a
// ResourceQuota does not allow yet. Such a refusal is not final: the write
// is allowed once the quota's limits are raised, once what it counts
// goes down, or, for a quota just created, once the quota controller has
// counted its usage; a Pod refused for not saying how much of what the
// quota limits it needs is allowed once the quota stops limiting it (or
// the Pod says). The agent waits on the quota; kubectl kro says which
// quota to look at and what to change.
package quota

import "regexp"

// Refusal is a ResourceQuota's refusal of a write.
type Refusal struct {
	// Quota is the ResourceQuota's name.
	Quota string
	// Unspecified is set when the quota refused an object that does not
	// say how much it needs of what the quota limits (a Pod without the
	// requests or limits the quota sets hard limits on), rather than one
	// it has no room for.
	Unspecified bool
}

// refusal matches the ResourceQuota admission plugin's words for a write
// the quota has no room for, for one it cannot admit before its usage is
// known, and for a Pod that does not specify what the quota limits. A
// quota's name holds no comma, colon or space.
var refusal = regexp.MustCompile(`(?:(?:exceeded quota|status unknown for quota): ([^,:\s]+),)|(?:failed quota: ([^,:\s]+): must specify )`)

// RefusedBy tells which ResourceQuota message (an API server error, or a
// condition quoting one) says refused a write, and why, and whether it
// says so at all.
func RefusedBy(message string) (Refusal, bool) {
	m := refusal.FindStringSubmatch(message)
	switch {
	case m == nil:
		return Refusal{}, false
	case m[1] != "":
		return Refusal{Quota: m[1]}, true
	default:
		return Refusal{Quota: m[2], Unspecified: true}, true
	}
}
