package limitrange

import "testing"

func TestRefused(t *testing.T) {
	for message, want := range map[string]bool{
		// The API server's words (the LimitRanger admission plugin).
		`pods "big" is forbidden: maximum cpu usage per Container is 100m, but limit is 500m`:                                                                                         true,
		`pods "p" is forbidden: maximum cpu usage per Pod is 100m.  No limit is specified`:                                                                                            true,
		`persistentvolumeclaims "data" is forbidden: maximum storage usage per PersistentVolumeClaim is 10Gi, but request is 50Gi`:                                                    true,
		`pods "p" is forbidden: [minimum memory usage per Container is 64Mi, but request is 10Mi, cpu max limit to request ratio per Container is 2, but provided ratio is 4.000000]`: true,
		`pods "p" is forbidden: exceeded quota: room, requested: pods=1, used: pods=1, limited: pods=1`:                                                                               false,
		`configmaps "a" is forbidden: User "x" cannot create resource "configmaps"`:                                                                                                   false,
	} {
		if got := Refused(message); got != want {
			t.Errorf("Refused(%q) = %v, want %v", message, got, want)
		}
	}
}
