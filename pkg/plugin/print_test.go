package plugin

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestTruncateCutsBetweenCharacters(t *testing.T) {
	for _, tc := range []struct {
		in   string
		n    int
		want string
	}{
		{in: "short", n: 10, want: "short"},
		{in: "exactly ten", n: 11, want: "exactly ten"},
		{in: "abcdefghijkl", n: 10, want: "abcdefg..."},
		// "é" is two bytes and would be cut in two at byte 7.
		{in: "abcdeféghij", n: 10, want: "abcdef..."},
		{in: strings.Repeat("日", 5), n: 10, want: "日日..."},
	} {
		got := truncate(tc.in, tc.n)
		if got != tc.want || !utf8.ValidString(got) || len(got) > tc.n {
			t.Errorf("truncate(%q, %d) = %q, want %q", tc.in, tc.n, got, tc.want)
		}
	}
}
