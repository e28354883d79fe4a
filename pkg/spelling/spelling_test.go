package spelling

import "testing"

func TestClosest(t *testing.T) {
	names := []string{"replicas", "selector", "template", "strategy"}
	for _, tc := range []struct {
		typed, want string
		ok          bool
	}{
		{"replica", "replicas", true},
		{"Replicas", "replicas", true},
		{"tempalte", "template", true},
		{"image", "", false},
		{"", "", false},
	} {
		got, ok := Closest(tc.typed, names)
		if ok != tc.ok || ok && got != tc.want {
			t.Errorf("Closest(%q) = %q, %v; want %q, %v", tc.typed, got, ok, tc.want, tc.ok)
		}
	}
}

func TestDistance(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		want int
	}{{"", "", 0}, {"abc", "", 3}, {"kitten", "sitting", 3}, {"service", "servce", 1}} {
		if got := Distance(tc.a, tc.b); got != tc.want {
			t.Errorf("Distance(%q, %q) = %d, want %d", tc.a, tc.b, got, tc.want)
		}
	}
}
