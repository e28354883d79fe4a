package plugin

import (
	"context"
	"strings"

	"github.com/spf13/cobra"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// completeInstances completes KIND (the kinds RGDs serve) and then NAME (the
// instances of that kind in the namespace).
func completeInstances(o *Options) func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
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
		switch len(args) {
		case 0:
			rgds, err := c.listRGDs(ctx)
			if err != nil {
				return nil, cobra.ShellCompDirectiveNoFileComp
			}
			for _, r := range rgds {
				if k := strings.ToLower(rgdKind(&r).Kind); strings.HasPrefix(k, prefix) {
					out = append(out, k)
				}
			}
		case 1:
			m, err := c.mapping(args[0])
			if err != nil {
				return nil, cobra.ShellCompDirectiveNoFileComp
			}
			list, err := c.dyn.Resource(m.Resource).Namespace(c.namespace).List(ctx, metav1.ListOptions{})
			if err != nil {
				return nil, cobra.ShellCompDirectiveNoFileComp
			}
			for _, u := range list.Items {
				if strings.HasPrefix(u.GetName(), prefix) {
					out = append(out, u.GetName())
				}
			}
		}
		return out, cobra.ShellCompDirectiveNoFileComp
	}
}
