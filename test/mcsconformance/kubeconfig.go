package mcsconformance

import (
	"fmt"
	"maps"

	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// MergeKubeconfigs writes to out one kubeconfig holding the clusters,
// users and contexts of every file of in: the suite takes a single file
// with a context per cluster. Names must not collide (the testbed names
// them after their cluster).
func MergeKubeconfigs(out string, in ...string) error {
	merged := clientcmdapi.NewConfig()
	for _, path := range in {
		cfg, err := clientcmd.LoadFromFile(path)
		if err != nil {
			return err
		}
		for name := range cfg.Contexts {
			if _, dup := merged.Contexts[name]; dup {
				return fmt.Errorf("context %q is in two kubeconfigs (%s)", name, path)
			}
		}
		maps.Copy(merged.Clusters, cfg.Clusters)
		maps.Copy(merged.AuthInfos, cfg.AuthInfos)
		maps.Copy(merged.Contexts, cfg.Contexts)
		if merged.CurrentContext == "" {
			merged.CurrentContext = cfg.CurrentContext
		}
	}
	return clientcmd.WriteToFile(*merged, out)
}
