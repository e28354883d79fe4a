package plugin

import (
	"context"
	"strings"

	"github.com/spf13/cobra"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// completeInstances completes KIND (the kinds RGDs serve, and rgd when
// the command also takes an RGD) and then NAME (the objects of that kind in
// the namespace), or the NAME of KIND/NAME.
func completeInstances(o *Options, takesRGD bool) func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
	return func(cmd *cobra.Command, args []string, prefix string) ([]string, cobra.ShellCompDirective) {
		ctx := cmd.Context()
		if ctx == nil {
			ctx = context.Background()
		}
		c, err := o.cluster()
		if err != nil {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		var out []string
		switch {
		case len(args) == 0 && strings.Contains(prefix, "/"):
			kind, namePrefix, _ := strings.Cut(prefix, "/")
			for _, name := range instanceNames(ctx, c, kind, namePrefix) {
				out = append(out, kind+"/"+name)
			}
		case len(args) == 0:
			rgds, err := c.listRGDs(ctx)
			if err != nil {
				return nil, cobra.ShellCompDirectiveNoFileComp
			}
			for _, r := range rgds {
				if k := strings.ToLower(rgdKind(&r).Kind); strings.HasPrefix(k, prefix) {
					out = append(out, k)
				}
			}
			if takesRGD && strings.HasPrefix("rgd", prefix) {
				out = append(out, "rgd")
			}
		case len(args) == 1 && !strings.Contains(args[0], "/"):
			out = instanceNames(ctx, c, args[0], prefix)
		}
		return out, cobra.ShellCompDirectiveNoFileComp
	}
}

// instanceNames lists the names of kind's instances in the namespace that
// start with prefix; nothing when the kind or the list is not available.
func instanceNames(ctx context.Context, c *cluster, kind, prefix string) []string {
	m, err := c.mapping(kind)
	if err != nil {
		return nil
	}
	list, err := c.resourceIn(m, c.namespace).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil
	}
	var names []string
	for _, u := range list.Items {
		if strings.HasPrefix(u.GetName(), prefix) {
			names = append(names, u.GetName())
		}
	}
	return names
}
