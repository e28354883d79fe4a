// Package limitrange recognises the API server's refusals of Pods,
// containers and PersistentVolumeClaims that ask for more or less than a
// LimitRange of their namespace allows. The refusal names no LimitRange:
// a change of any in the namespace, or of the object, may lift it. The
// agent waits on the namespace's LimitRanges; kubectl kro says where to
// look.
package limitrange

import "regexp"

// refusal matches the LimitRanger admission plugin's words: "maximum cpu
// usage per Container is 100m, but limit is 500m", "minimum storage usage
// per PersistentVolumeClaim is 1Gi.  No request is specified", "cpu max
// limit to request ratio per Pod is 2, but provided ratio is 4.000000".
var refusal = regexp.MustCompile(`(?:(?:minimum|maximum) \S+ usage|max limit to request ratio) per (?:Container|Pod|PersistentVolumeClaim) is `)

// Refused tells whether message (an API server error, or a condition
// quoting one) is a LimitRange's refusal.
func Refused(message string) bool {
	return refusal.MatchString(message)
}
