package install

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"helm.sh/helm/v3/pkg/action"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/dynamic"

	"github.com/liqo-go/liqo/pkg/consts"
	"github.com/liqo-go/liqo/pkg/identity"
	"github.com/liqo-go/liqo/pkg/testbed"
)

// helmUninstall removes the release as `helm uninstall liqo -n liqo` does:
// the Helm SDK alone, none of liqoctl's own steps.
func helmUninstall(t *testing.T, c *testbed.Cluster) {
	t.Helper()
	flags := genericclioptions.NewConfigFlags(false)
	path, ns := kubeconfigs[c.Name], consts.DefaultNamespace
	flags.KubeConfig, flags.Namespace = &path, &ns
	cfg := &action.Configuration{}
	if err := cfg.Init(flags, ns, "secret", t.Logf); err != nil {
		t.Fatal(err)
	}
	un := action.NewUninstall(cfg)
	un.Wait, un.Timeout = true, 3*time.Minute
	if _, err := un.Run("liqo"); err != nil {
		t.Fatalf("%s: helm uninstall: %v", c.Name, err)
	}
}

// keptByHelmUninstall is what a plain helm uninstall leaves on purpose:
// the CRDs (Helm never deletes a chart's crds/, so that no custom resource
// is lost with a release) and the APIServices the API server made for their
// groups; the install namespace (made by --create-namespace, which Helm does
// not own) with the cluster's identity in it (its keys, and the cluster-ID
// ConfigMap, which the chart keeps), so that a reinstall is the same
// cluster to its peers; and the storage namespace, which holds the data of
// the volumes offloaded pods used. liqoctl uninstall --purge removes them.
func keptByHelmUninstall(gvr schema.GroupVersionResource, namespace, name string) bool {
	switch {
	case gvr.Resource == "customresourcedefinitions":
		return true
	case gvr.Resource == "apiservices" && strings.HasSuffix(name, ".liqo.io"):
		return true
	case gvr.Resource == "namespaces" && (name == consts.DefaultNamespace || name == consts.StorageNamespace):
		return true
	case gvr.Resource == "secrets" && namespace == consts.DefaultNamespace &&
		(name == identity.SecretName || name == identity.ClientKeySecretName):
		return true
	case gvr.Resource == "configmaps" && namespace == consts.DefaultNamespace && name == consts.ClusterIDConfigMap:
		return true
	}
	return false
}

// leftovers lists every object of every listable kind on c that is ours:
// labelled managed-by or part-of liqo, or named after it; kinds in
// skipGroups are not read (events and leases only record what happened).
func leftovers(ctx context.Context, t *testing.T, c *testbed.Cluster, keep func(schema.GroupVersionResource, string, string) bool) []string {
	t.Helper()
	disc, err := discovery.NewDiscoveryClientForConfig(c.Config)
	if err != nil {
		t.Fatal(err)
	}
	dyn, err := dynamic.NewForConfig(c.Config)
	if err != nil {
		t.Fatal(err)
	}
	lists, err := disc.ServerPreferredResources()
	if err != nil && len(lists) == 0 {
		t.Fatalf("%s: discovery: %v", c.Name, err)
	}
	var left []string
	for _, l := range lists {
		gv, err := schema.ParseGroupVersion(l.GroupVersion)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range l.APIResources {
			if strings.Contains(r.Name, "/") || !slices.Contains(r.Verbs, "list") ||
				r.Name == "events" || r.Name == "leases" || r.Name == "componentstatuses" {
				continue
			}
			gvr := gv.WithResource(r.Name)
			objs, err := dyn.Resource(gvr).List(ctx, metav1.ListOptions{})
			if err != nil {
				t.Errorf("%s: listing %s: %v", c.Name, gvr, err)
				continue
			}
			for _, o := range objs.Items {
				labels := o.GetLabels()
				ours := labels[consts.ManagedByLabel] == consts.ManagedByValue || labels[consts.PartOfLabel] == consts.PartOfValue ||
					strings.Contains(o.GetName(), "liqo") || strings.HasSuffix(gv.Group, ".liqo.io")
				if ours && !keep(gvr, o.GetNamespace(), o.GetName()) {
					left = append(left, gvr.Resource+" "+strings.TrimPrefix(o.GetNamespace()+"/"+o.GetName(), "/"))
				}
			}
		}
	}
	return left
}
