package plugin

import (
	"slices"
	"strings"
	"testing"
)

func TestInstanceArgsTakeBothKubectlForms(t *testing.T) {
	for _, args := range [][]string{{"webapp", "demo"}, {"webapp/demo"}, {"webapps.kro.run/demo"}} {
		kind, name, err := instanceArgs(args)
		if err != nil || name != "demo" || !strings.HasPrefix(kind, "webapp") {
			t.Errorf("%q: got %q %q, %v", args, kind, name, err)
		}
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{nil, "which instance? give KIND NAME or KIND/NAME"},
		{[]string{"webapp"}, "which webapp? give KIND NAME or KIND/NAME, such as webapp demo"},
		{[]string{"webapp/"}, `"webapp/" is not KIND/NAME`},
		{[]string{"/demo"}, `"/demo" is not KIND/NAME`},
		{[]string{"webapp/demo/x"}, `"webapp/demo/x" is not KIND/NAME`},
		{[]string{"webapp", "webapp/demo"}, "KIND NAME or as KIND/NAME, not both"},
		{[]string{"webapp/demo", "other"}, "KIND NAME or as KIND/NAME, not both"},
		{[]string{"webapp", "a", "b"}, "one instance at a time: got 3 arguments"},
	} {
		if _, _, err := instanceArgs(tc.args); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: got %v, want an error containing %q", tc.args, err, tc.want)
		}
	}
}

func TestStatusArgsNormalizeOneInstance(t *testing.T) {
	for _, tc := range []struct{ in, want []string }{
		{nil, nil},
		{[]string{"webapp"}, []string{"webapp"}},
		{[]string{"webapp", "demo"}, []string{"webapp", "demo"}},
		{[]string{"webapp/demo"}, []string{"webapp", "demo"}},
	} {
		got, err := statusArgs(tc.in)
		if err != nil || !slices.Equal(got, tc.want) {
			t.Errorf("%q: got %q, %v; want %q", tc.in, got, err, tc.want)
		}
	}
	if _, err := statusArgs([]string{"webapp", "demo", "more"}); err == nil {
		t.Error("three arguments were taken")
	}
}
