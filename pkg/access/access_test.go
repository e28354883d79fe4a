package access

import "testing"

func TestWordsReadAsASentence(t *testing.T) {
	for _, c := range []struct {
		verbs []string
		want  string
	}{
		{nil, ""},
		{[]string{"watch"}, "watch"},
		{[]string{"get", "list"}, "get or list"},
		{[]string{"get", "list", "watch"}, "get, list or watch"},
	} {
		if got := Words(c.verbs, "or"); got != c.want {
			t.Errorf("Words(%q) = %q, want %q", c.verbs, got, c.want)
		}
	}
}
