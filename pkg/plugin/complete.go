package plugin

import (
	"context"
	"maps"
	"slices"
	"sort"
	"strings"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
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

// completeConnectionFlags completes the kubectl connection flags the way
// kubectl does: -n with the cluster's namespaces, --context, --cluster and
// --user with the kubeconfig's entries. Flags given before the one being
// completed (--kubeconfig, --context) are already parsed, so the lists come
// from the kubeconfig and cluster the command would use.
func completeConnectionFlags(cmd *cobra.Command, o *Options) {
	_ = cmd.RegisterFlagCompletionFunc("namespace", func(cmd *cobra.Command, _ []string, prefix string) ([]string, cobra.ShellCompDirective) {
		c, err := o.cluster()
		if err != nil {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		ctx := cmd.Context()
		if ctx == nil {
			ctx = context.Background()
		}
		list, err := c.metadata.Resource(corev1.SchemeGroupVersion.WithResource("namespaces")).List(ctx, metav1.ListOptions{})
		if err != nil {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		var names []string
		for _, ns := range list.Items {
			names = append(names, ns.Name)
		}
		return withPrefix(names, prefix), cobra.ShellCompDirectiveNoFileComp
	})
	fromKubeconfig := func(entries func(*clientcmdapi.Config) []string) cobra.CompletionFunc {
		return func(_ *cobra.Command, _ []string, prefix string) ([]string, cobra.ShellCompDirective) {
			raw, err := o.Config.ToRawKubeConfigLoader().RawConfig()
			if err != nil {
				return nil, cobra.ShellCompDirectiveNoFileComp
			}
			names := entries(&raw)
			sort.Strings(names)
			return withPrefix(names, prefix), cobra.ShellCompDirectiveNoFileComp
		}
	}
	_ = cmd.RegisterFlagCompletionFunc("context", fromKubeconfig(func(c *clientcmdapi.Config) []string { return slices.Collect(maps.Keys(c.Contexts)) }))
	_ = cmd.RegisterFlagCompletionFunc("cluster", fromKubeconfig(func(c *clientcmdapi.Config) []string { return slices.Collect(maps.Keys(c.Clusters)) }))
	_ = cmd.RegisterFlagCompletionFunc("user", fromKubeconfig(func(c *clientcmdapi.Config) []string { return slices.Collect(maps.Keys(c.AuthInfos)) }))
}

// withPrefix keeps the names that start with prefix.
func withPrefix(names []string, prefix string) []string {
	return slices.DeleteFunc(names, func(n string) bool { return !strings.HasPrefix(n, prefix) })
}
