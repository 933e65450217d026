package liqoctl

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

// seedLines are the liqoctl command lines of the spec's manuals
// (/work/shared/seeds: 002 the v0.5 manual, 003 the v1.x user's notes),
// verbatim but for continuation lines joined and placeholders (<...>,
// $VARIABLES) left for seedValues to fill. The v0.5 manual's text
// extraction often spells liqoctl "liqctl": those lines are given as
// liqoctl. Lines marked "(text)" are not in a code block: they use the
// flags the manual's text names with the command it documents. test/peering's
// TestSeedLinesOnClusters runs the ones that need Liqo running on clusters.
var seedLines = []struct{ where, line string }{
	{"002:552", `liqoctl completion bash`},
	{"002:576", `liqoctl completion zsh`},
	{"002:588", `liqoctl completion fish`},
	{"002:608", `liqoctl completion powershell`},
	{"002:664", `liqoctl install kubeadm`},
	{"002:680", `liqoctl install openshift`},
	{"002:723", `liqoctl install aks --resource-group-name "${AKS_RESOURCE_GROUP}" --resource-name "${AKS_RESOURCE_NAME}" --subscription-name "${AKS_SUBSCRIPTION_ID}"`},
	{"002:730 (text)", `liqoctl install aks --disable-endpoint-check`},
	{"002:772", `liqoctl install eks --eks-cluster-region=${EKS_CLUSTER_REGION} --eks-cluster-name=${EKS_CLUSTER_NAME}`},
	{"002:849", `liqoctl install gke --project-id ${GKE_PROJECT_ID} --cluster-id ${GKE_CLUSTER_ID} --zone ${GKE_CLUSTER_ZONE} --credentials-path ${GKE_SERVICE_ACCOUNT_PATH}`},
	{"002:864", `liqoctl install k3s`},
	{"002:876", `liqoctl install kind`},
	{"002:896", `liqoctl install --api-server-url=<API-SERVER-URL> --pod-cidr=<POD-CIDR> --service-cidr=<SERVICE-CIDR>`},
	{"002:670 (text)", `liqoctl install kubeadm --cluster-name <NAME>`},
	{"002:916 (text)", `liqoctl install kind --enable-ha --timeout 10m --verbose`},
	{"002:922 (text)", `liqoctl install kind --cluster-name <NAME> --cluster-labels <KEY>=<VALUE> --sharing-percentage 30`},
	{"002:930 (text)", `liqoctl install kind --reserved-subnets <CIDR>`},
	{"002:904 (text)", `liqoctl install kind --set <KEY>=<VALUE>`},
	{"002:949", `liqoctl install kind --only-output-values`},
	{"002:951 (text)", `liqoctl install kind --only-output-values --dump-values-path <PATH>`},
	{"002:982", `liqoctl install kind --version <commit-sha> --repo-url <forked-repo-url>`},
	{"002:988", `liqoctl install kind --version <commit-sha> --local-chart-path <path-to-local-chart>`},
	{"002:1037", `liqoctl uninstall`},
	{"002:1059", `liqoctl uninstall --purge`},
	{"002:1183", `liqoctl install kind --cluster-name rome`},
	{"002:1193", `liqoctl install kind --cluster-name milan --kubeconfig "$KUBECONFIG_MILAN"`},
	{"002:1233", `liqoctl generate peer-command --kubeconfig "$KUBECONFIG_MILAN"`},
	{"002:1239", `liqoctl peer out-of-band milan --auth-url <auth-url> --cluster-id milan --auth-token <auth-token>`},
	{"002:1281", `liqoctl offload namespace liqo-demo`},
	{"002:1481", `liqoctl unoffload namespace liqo-demo`},
	{"002:1491", `liqoctl unpeer out-of-band milan`},
	{"002:1501", `liqoctl uninstall`},
	{"002:1502", `liqoctl uninstall --kubeconfig="$KUBECONFIG_MILAN"`},
	{"002:1513", `liqoctl uninstall --purge --kubeconfig="$KUBECONFIG_MILAN"`},
	{"002:1581", `liqoctl status`},
	{"002:1582", `liqoctl --kubeconfig $KUBECONFIG_FLORENCE status`},
	{"002:1595", `liqoctl generate peer-command --only-command --kubeconfig $KUBECONFIG_FLORENCE`},
	{"002:1651", `liqoctl offload namespace liqo-demo --namespace-mapping-strategy EnforceSameName --pod-offloading-strategy LocalAndRemote --selector 'topology.liqo.io/region=south'`},
	{"002:1777", `liqoctl unpeer out-of-band florence`},
	{"002:1801", `liqoctl uninstall --kubeconfig="$KUBECONFIG_FLORENCE" --purge`},
	{"002:1899", `liqoctl offload namespace liqo-demo --namespace-mapping-strategy EnforceSameName --pod-offloading-strategy Local`},
	{"002:2095", `liqoctl offload namespace liqo-demo --namespace-mapping-strategy EnforceSameName`},
	{"002:2358", `liqoctl offload namespace podinfo --namespace-mapping-strategy EnforceSameName`},
	{"002:2683", `liqoctl --context=provider generate peer-command`},
	{"002:2691", `liqoctl peer out-of-band <cluster-name> --auth-url <auth-url> --cluster-id <cluster-id> --auth-token <auth-token>`},
	{"002:2702", `liqoctl --context=consumer peer out-of-band <cluster-name> --auth-url <auth-url> --cluster-id <cluster-id> --auth-token <auth-token>`},
	{"002:2743", `liqoctl --context=provider peer consumer`},
	{"002:2751", `liqoctl --context=consumer unpeer out-of-band`},
	{"002:2771", `liqoctl peer in-band --context=consumer --remote-context=provider`},
	{"002:2811", `liqoctl peer in-band --context=consumer --remote-context=provider --bidirectional`},
	{"002:2833", `liqoctl unpeer in-band --context=consumer --remote-context=provider`},
	{"002:2839", `liqoctl --context=provider unpeer consumer`},
	{"002:2855", `liqoctl offload namespace foo`},
	{"002:2861", `liqoctl offload namespace foo --output yaml`},
	{"002:2900", `liqoctl offload namespace foo --selector 'region in (europe,us-west), !staging'`},
	{"002:2901", `liqoctl offload namespace foo --selector 'region in (europe,us-west)' --selector '!staging'`},
	{"002:2931", `liqoctl unoffload namespace foo`},
	{"002:3081", `liqoctl move volume $PVC_NAME --namespace $NAMESPACE_NAME --node $TARGET_NODE_NAME`},
	{"002:3139", `liqoctl install kind --kubeconfig=./liqo_kubeconf_rome --version <version>`},
	{"003:91", `liqoctl install k3s --cluster-name aws-gpu-cluster --set networking.internal=false --set auth.config.enableAuthentication=false`},
	{"003:112", `liqoctl peer --remote-kubeconfig /path/to/aws-kubeconfig --namespace liqo --remote-namespace liqo-system --networking-disabled`},
	{"003:134", `liqoctl info`},
	{"003:225", `liqoctl peer --remote-kubeconfig /path/to/aws-kubeconfig --cpu=8 --memory=16Gi --pods=50`},
	{"003:289", `liqoctl info --verbose`},
}

// seedValues fill the seeds' placeholders with values a testbed run could
// use.
var seedValues = map[string]string{
	"<API-SERVER-URL>": "https://203.0.113.10:6443", "<POD-CIDR>": "10.244.0.0/16", "<SERVICE-CIDR>": "10.96.0.0/12",
	"<NAME>": "rome", "<KEY>": "region", "<VALUE>": "eu", "<CIDR>": "172.16.0.0/16", "<PATH>": "rome-values.yaml",
	"<commit-sha>": "0123456789abcdef0123456789abcdef01234567", "<forked-repo-url>": "https://github.com/example/liqo-fork.git",
	"<path-to-local-chart>": "../../deploy/charts/liqo", "<version>": "v1.0.0",
	"<auth-url>": "https://203.0.113.20:6443", "<auth-token>": "TOKEN", "<cluster-name>": "provider", "<cluster-id>": "provider",
	"${AKS_RESOURCE_GROUP}": "rg", "${AKS_RESOURCE_NAME}": "rome", "${AKS_SUBSCRIPTION_ID}": "sub",
	"${EKS_CLUSTER_REGION}": "eu-south-1", "${EKS_CLUSTER_NAME}": "rome",
	"${GKE_PROJECT_ID}": "project", "${GKE_CLUSTER_ID}": "rome", "${GKE_CLUSTER_ZONE}": "europe-west1-b",
	"${GKE_SERVICE_ACCOUNT_PATH}": "/tmp/gcp.json",
	"$KUBECONFIG_MILAN":           "/tmp/milan.kubeconfig", "$KUBECONFIG_FLORENCE": "/tmp/florence.kubeconfig",
	"$PVC_NAME": "data-db-0", "$NAMESPACE_NAME": "shop", "$TARGET_NODE_NAME": "liqo-milan",
}

// seedArgs is the line with its placeholders filled, as liqoctl's
// arguments.
func seedArgs(t *testing.T, line string) []string {
	t.Helper()
	for k, v := range seedValues {
		line = strings.ReplaceAll(line, k, v)
	}
	if strings.ContainsAny(line, "<$") {
		t.Fatalf("a placeholder is left in %q", line)
	}
	args := ShellWords(line)
	if len(args) == 0 || args[0] != Name {
		t.Fatalf("%q is not a liqoctl command line", line)
	}
	return args[1:]
}

// TestSeedLinesParse: every seed command line names a runnable command of
// the tree, with flags it has and arguments it takes (CheckArgs: cobra's
// Find, ParseFlags and the argument and flag-group checks, as Execute does
// before running it). test/docs checks the documentation's lines the same way.
func TestSeedLinesParse(t *testing.T) {
	for _, s := range seedLines {
		t.Run(s.where, func(t *testing.T) {
			if _, err := CheckArgs(seedArgs(t, s.line)); err != nil {
				t.Errorf("%s: %v", s.line, err)
			}
		})
	}
}

// TestSeedLinesRun runs, for real, the seed lines that need no cluster:
// the completion scripts, and install --only-output-values, which with no
// cluster to reach writes the values the flags give to values.yaml (or
// --dump-values-path) in the current directory.
func TestSeedLinesRun(t *testing.T) {
	t.Setenv("KUBECONFIG", "")
	t.Setenv("HOME", t.TempDir())
	t.Setenv("KUBERNETES_SERVICE_HOST", "")
	chart, err := filepath.Abs("../../deploy/charts/liqo")
	if err != nil {
		t.Fatal(err)
	}
	t.Chdir(t.TempDir())
	run := func(t *testing.T, args ...string) (string, string) {
		t.Helper()
		var out, errOut bytes.Buffer
		if code := Run(context.Background(), args, &out, &errOut); code != 0 {
			t.Fatalf("liqoctl %s: exit %d: %s", strings.Join(args, " "), code, errOut.String())
		}
		return out.String(), errOut.String()
	}
	for _, shell := range []string{"bash", "zsh", "fish", "powershell"} {
		t.Run("completion "+shell, func(t *testing.T) {
			if out, _ := run(t, "completion", shell); !strings.Contains(out, "liqoctl") || len(out) < 1000 {
				t.Errorf("completion %s printed no script:\n%s", shell, out)
			}
		})
	}
	values := func(t *testing.T, path string) map[string]any {
		t.Helper()
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatalf("no values file: %v", err)
		}
		var v map[string]any
		if err := yaml.Unmarshal(b, &v); err != nil {
			t.Fatalf("%s is not YAML: %v", path, err)
		}
		return v
	}
	t.Run("install kind --only-output-values", func(t *testing.T) {
		_, errOut := run(t, seedArgs(t, `liqoctl install kind --only-output-values`)...)
		if !strings.Contains(errOut, "the cluster cannot be reached") || !strings.Contains(errOut, "ipam.podCIDR (--pod-cidr) is left empty") {
			t.Errorf("no warning about the cluster and what is left empty:\n%s", errOut)
		}
		if v := values(t, "values.yaml"); v["clusterID"] != "" || v["image"] == nil {
			t.Errorf("values.yaml: clusterID %v, image %v: want the chart's values with no cluster ID", v["clusterID"], v["image"])
		}
	})
	t.Run("install --cluster-name --only-output-values --dump-values-path", func(t *testing.T) {
		args := append(seedArgs(t, `liqoctl install --api-server-url=<API-SERVER-URL> --pod-cidr=<POD-CIDR> --service-cidr=<SERVICE-CIDR>`),
			"--cluster-name", "rome", "--only-output-values", "--dump-values-path", "rome.yaml", "--local-chart-path", chart)
		run(t, args...)
		v := values(t, "rome.yaml")
		ipam, _ := v["ipam"].(map[string]any)
		api, _ := v["apiServer"].(map[string]any)
		if v["clusterID"] != "rome" || ipam["podCIDR"] != "10.244.0.0/16" || api["address"] != "https://203.0.113.10:6443" {
			t.Errorf("rome.yaml: clusterID %v, ipam %v, apiServer %v", v["clusterID"], ipam, api)
		}
	})
	t.Run("install --only-output-values --dump-values-path -", func(t *testing.T) {
		out, _ := run(t, "install", "k3s", "--cluster-id", "milan", "--only-output-values", "--dump-values-path", "-")
		if !strings.Contains(out, "clusterID: milan") || !strings.Contains(out, "podCIDR: 10.42.0.0/16") {
			t.Errorf("stdout is not the values of k3s and milan:\n%s", out)
		}
	})
}
