// Package quota recognises the API server's refusals of writes that a
// ResourceQuota does not allow yet. Such a refusal is not final: the write
// is allowed once the quota's limits are raised, once what it counts
// goes down, or, for a quota just created, once the quota controller has
// counted its usage. The agent waits on the quota; kubectl kro says which
// quota to look at.
package quota

import "regexp"

// refusal matches the ResourceQuota admission plugin's words for a write
// the quota has no room for, and for one it cannot admit before its
// usage is known. A quota's name holds no comma or space.
var refusal = regexp.MustCompile(`(?:exceeded quota|status unknown for quota): ([^,\s]+),`)

// RefusedBy returns the name of the ResourceQuota that message (an API
// server error, or a condition quoting one) says refused a write for want
// of room, and whether it says so.
func RefusedBy(message string) (string, bool) {
	m := refusal.FindStringSubmatch(message)
	if m == nil {
		return "", false
	}
	return m[1], true
}
