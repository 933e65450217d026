package liqoctl

import (
	"strings"
	"testing"
)

// referenceSurface is the reference system's liqoctl, every leaf command
// with its flags (names only; "name/x" for a flag with shorthand -x), as
// /work/shared/notes/reference-liqoctl-surface.md lists them: users
// migrating bring scripts using them. A word after the command path that
// is no command of ours (completion bash, install kind) is an argument.
var referenceSurface = []struct {
	command string
	flags   []string
}{
	{"activate tenant", strings.Fields("cluster context help/h kubeconfig timeout user verbose/v global-annotations global-labels skip-confirm")},
	{"authenticate", strings.Fields("cluster context help/h in-band kubeconfig namespace/n proxy-url remote-cluster remote-context remote-kubeconfig remote-namespace remote-user timeout user verbose/v global-annotations global-labels skip-confirm")},
	{"completion bash", strings.Fields("help/h no-descriptions cluster context global-annotations global-labels kubeconfig skip-confirm user verbose/v")},
	{"completion fish", strings.Fields("help/h no-descriptions cluster context global-annotations global-labels kubeconfig skip-confirm user verbose/v")},
	{"completion powershell", strings.Fields("help/h no-descriptions cluster context global-annotations global-labels kubeconfig skip-confirm user verbose/v")},
	{"completion zsh", strings.Fields("help/h no-descriptions cluster context global-annotations global-labels kubeconfig skip-confirm user verbose/v")},
	{"cordon resourceslice", strings.Fields("cluster context help/h kubeconfig remote-cluster-id timeout user verbose/v global-annotations global-labels skip-confirm")},
	{"cordon tenant", strings.Fields("cluster context help/h kubeconfig timeout user verbose/v global-annotations global-labels skip-confirm")},
	{"create configuration", strings.Fields("pod-cidr external-cidr help/h output/o remote-cluster-id wait cluster context global-annotations global-labels kubeconfig liqo-namespace namespace/n skip-confirm user verbose/v")},
	{"create gatewayclient", strings.Fields("remote-cluster-id type addresses help/h mtu output/o port protocol template-name template-namespace wait cluster context global-annotations global-labels kubeconfig liqo-namespace namespace/n skip-confirm user verbose/v")},
	{"create gatewayserver", strings.Fields("remote-cluster-id type help/h load-balancer-ip mtu node-port output/o port service-type template-name template-namespace wait cluster context global-annotations global-labels kubeconfig liqo-namespace namespace/n skip-confirm user verbose/v")},
	{"create nonce", strings.Fields("help/h output/o remote-cluster-id cluster context global-annotations global-labels kubeconfig liqo-namespace namespace/n skip-confirm user verbose/v")},
	{"create publickey", strings.Fields("help/h output/o public-key remote-cluster-id cluster context global-annotations global-labels kubeconfig liqo-namespace namespace/n skip-confirm user verbose/v")},
	{"create resourceslice", strings.Fields("cpu class help/h memory no-virtual-node output/o pods remote-cluster-id resource cluster context global-annotations global-labels kubeconfig liqo-namespace namespace/n skip-confirm user verbose/v")},
	{"create virtualnode", strings.Fields("kubeconfig-secret-name resource-slice-name cpu create-node disable-network-check help/h ingress-classes labels load-balancer-classes memory node-selector output/o pods remote-cluster-id resource runtime-class-name storage-classes vk-options-template cluster context global-annotations global-labels kubeconfig liqo-namespace namespace/n skip-confirm user verbose/v")},
	{"delete configuration", strings.Fields("help/h cluster context global-annotations global-labels kubeconfig namespace/n skip-confirm user verbose/v")},
	{"delete gatewayclient", strings.Fields("help/h cluster context global-annotations global-labels kubeconfig namespace/n skip-confirm user verbose/v")},
	{"delete gatewayserver", strings.Fields("help/h cluster context global-annotations global-labels kubeconfig namespace/n skip-confirm user verbose/v")},
	{"delete peering-user", strings.Fields("consumer-cluster-id help/h cluster context global-annotations global-labels kubeconfig namespace/n skip-confirm user verbose/v")},
	{"delete publickey", strings.Fields("help/h cluster context global-annotations global-labels kubeconfig namespace/n skip-confirm user verbose/v")},
	{"delete virtualnode", strings.Fields("help/h cluster context global-annotations global-labels kubeconfig namespace/n skip-confirm user verbose/v")},
	{"drain tenant", strings.Fields("cluster context help/h kubeconfig timeout user verbose/v global-annotations global-labels skip-confirm")},
	{"force unpeer", strings.Fields("help/h cluster context global-annotations global-labels kubeconfig skip-confirm user verbose/v")},
	{"generate configuration", strings.Fields("help/h output/o cluster context global-annotations global-labels kubeconfig liqo-namespace namespace/n skip-confirm user verbose/v")},
	{"generate identity", strings.Fields("help/h output/o remote-cluster-id remote-tenant-namespace cluster context global-annotations global-labels kubeconfig liqo-namespace namespace/n skip-confirm user verbose/v")},
	{"generate peering-user", strings.Fields("consumer-cluster-id help/h tls-compatibility-mode cluster context global-annotations global-labels kubeconfig liqo-namespace namespace/n skip-confirm user verbose/v")},
	{"generate publickey", strings.Fields("gateway-name gateway-type help/h output/o cluster context global-annotations global-labels kubeconfig liqo-namespace namespace/n skip-confirm user verbose/v")},
	{"generate tenant", strings.Fields("help/h nonce output/o proxy-url remote-cluster-id remote-tenant-namespace cluster context global-annotations global-labels kubeconfig liqo-namespace namespace/n skip-confirm user verbose/v")},
	{"get kubeconfig", strings.Fields("help/h remote-cluster-id cluster context global-annotations global-labels kubeconfig namespace/n skip-confirm user verbose/v")},
	{"get nonce", strings.Fields("help/h remote-cluster-id cluster context global-annotations global-labels kubeconfig namespace/n skip-confirm user verbose/v")},
	{"info peer", strings.Fields("help/h cluster context get/g global-annotations global-labels kubeconfig namespace/n output/o skip-confirm user verbose/v")},
	{"install aks", strings.Fields("fqdn help/h pod-cidr private-link resource-group-name resource-name subscription-id subscription-name vnet-resource-group-name cluster cluster-id cluster-labels context disable-api-server-sanity-check disable-kernel-version-check disable-telemetry dry-run dump-values-path enable-metrics global-annotations global-labels kubeconfig local-chart-path namespace/n only-output-values repo-url reserved-subnets set set-string skip-confirm skip-validation timeout user values verbose/v version")},
	{"install eks", strings.Fields("user-name access-key-id eks-cluster-name eks-cluster-region help/h policy-name secret-access-key cluster cluster-id cluster-labels context disable-api-server-sanity-check disable-kernel-version-check disable-telemetry dry-run dump-values-path enable-metrics global-annotations global-labels kubeconfig local-chart-path namespace/n only-output-values repo-url reserved-subnets set set-string skip-confirm skip-validation timeout user values verbose/v version")},
	{"install gke", strings.Fields("cluster-id credentials-path help/h project-id region zone cluster cluster-labels context disable-api-server-sanity-check disable-kernel-version-check disable-telemetry dry-run dump-values-path enable-metrics global-annotations global-labels kubeconfig local-chart-path namespace/n only-output-values repo-url reserved-subnets set set-string skip-confirm skip-validation timeout user values verbose/v version")},
	{"install k3s", strings.Fields("cluster-labels reserved-subnets pod-cidr api-server-url help/h service-cidr cluster cluster-id context disable-api-server-sanity-check disable-kernel-version-check disable-telemetry dry-run dump-values-path enable-metrics global-annotations global-labels kubeconfig local-chart-path namespace/n only-output-values repo-url set set-string skip-confirm skip-validation timeout user values verbose/v version")},
	{"install kind", strings.Fields("help/h cluster cluster-id cluster-labels context disable-api-server-sanity-check disable-kernel-version-check disable-telemetry dry-run dump-values-path enable-metrics global-annotations global-labels kubeconfig local-chart-path namespace/n only-output-values repo-url reserved-subnets set set-string skip-confirm skip-validation timeout user values verbose/v version")},
	{"install kubeadm", strings.Fields("reserved-subnets help/h cluster cluster-id cluster-labels context disable-api-server-sanity-check disable-kernel-version-check disable-telemetry dry-run dump-values-path enable-metrics global-annotations global-labels kubeconfig local-chart-path namespace/n only-output-values repo-url set set-string skip-confirm skip-validation timeout user values verbose/v version")},
	{"install openshift", strings.Fields("reserved-subnets help/h cluster cluster-id cluster-labels context disable-api-server-sanity-check disable-kernel-version-check disable-telemetry dry-run dump-values-path enable-metrics global-annotations global-labels kubeconfig local-chart-path namespace/n only-output-values repo-url set set-string skip-confirm skip-validation timeout user values verbose/v version")},
	{"move volume", strings.Fields("containers-cpu-limits containers-cpu-requests containers-ram-limits containers-ram-requests help/h namespace/n restic-image restic-server-image target-node cluster context global-annotations global-labels kubeconfig skip-confirm user verbose/v")},
	{"network connect", strings.Fields("disable-sharing-keys gw-client-address gw-client-port gw-client-template-name gw-client-template-namespace gw-client-type gw-server-service-loadbalancerip gw-server-service-nodeport gw-server-service-port gw-server-service-type gw-server-template-name gw-server-template-namespace gw-server-type help/h mtu cluster context global-annotations global-labels kubeconfig liqo-namespace namespace/n remote-cluster remote-context remote-kubeconfig remote-liqo-namespace remote-namespace remote-user skip-confirm skip-validation timeout user verbose/v wait")},
	{"network disconnect", strings.Fields("help/h cluster context global-annotations global-labels kubeconfig liqo-namespace namespace/n remote-cluster remote-context remote-kubeconfig remote-liqo-namespace remote-namespace remote-user skip-confirm skip-validation timeout user verbose/v wait")},
	{"network reset", strings.Fields("help/h cluster context global-annotations global-labels kubeconfig liqo-namespace namespace/n remote-cluster remote-context remote-kubeconfig remote-liqo-namespace remote-namespace remote-user skip-confirm skip-validation timeout user verbose/v wait")},
	{"offload namespace", strings.Fields("selector help/h namespace-mapping-strategy ns-selector output/o pod-offloading-strategy remote-namespace-name selector/l timeout cluster context global-annotations global-labels kubeconfig skip-confirm user verbose/v")},
	{"peer", strings.Fields("cluster context cpu create-resource-slice create-virtual-node gw-client-address gw-client-port gw-server-service-loadbalancerip gw-server-service-location gw-server-service-nodeport gw-server-service-port gw-server-service-type help/h in-band kubeconfig memory mtu namespace/n networking-disabled pods proxy-url remote-cluster remote-context remote-kubeconfig remote-namespace remote-user resource resource-slice-class skip-validation timeout user verbose/v global-annotations global-labels skip-confirm")},
	{"test network", strings.Fields("basic help/h info ip lb np-ext np-nodes pod-np remote-kubeconfigs/p rm cluster context fail-fast global-annotations global-labels kubeconfig skip-confirm timeout user verbose/v")},
	{"unauthenticate", strings.Fields("cluster context help/h kubeconfig namespace/n remote-cluster remote-context remote-kubeconfig remote-namespace remote-user timeout user verbose/v wait global-annotations global-labels skip-confirm")},
	{"uncordon resourceslice", strings.Fields("cluster context help/h kubeconfig remote-cluster-id timeout user verbose/v global-annotations global-labels skip-confirm")},
	{"uncordon tenant", strings.Fields("cluster context help/h kubeconfig timeout user verbose/v global-annotations global-labels skip-confirm")},
	{"uninstall", strings.Fields("help/h namespace/n purge timeout cluster context global-annotations global-labels kubeconfig skip-confirm user verbose/v")},
	{"unoffload namespace", strings.Fields("help/h ns-selector timeout cluster context global-annotations global-labels kubeconfig skip-confirm user verbose/v")},
	{"unpeer", strings.Fields("cluster context delete-namespaces help/h kubeconfig namespace/n remote-cluster remote-context remote-kubeconfig remote-namespace remote-user timeout user verbose/v wait global-annotations global-labels skip-confirm")},
	{"version", strings.Fields("client help/h namespace/n cluster context global-annotations global-labels kubeconfig skip-confirm user verbose/v")},
}

// TestReferenceSurface: every command of the reference's liqoctl resolves
// in our tree (a command, with the words left over taken as its
// arguments), and each of its flags is one of that command's, its own or
// inherited, with the same shorthand. A flag whose meaning does not apply
// here is still accepted (and refused or ignored saying why, package
// compat), so that no reference script fails to parse.
func TestReferenceSurface(t *testing.T) {
	root := NewRootCommand()
	for _, ref := range referenceSurface {
		t.Run(ref.command, func(t *testing.T) {
			cmd, args, err := root.Find(strings.Fields(ref.command))
			if err != nil {
				t.Fatalf("not found: %v", err)
			}
			if cmd == root {
				t.Fatalf("resolves to the root command")
			}
			if len(args) > 0 && cmd.Args != nil {
				if err := cmd.Args(cmd, args); err != nil {
					t.Fatalf("%s does not take %v as arguments: %v", cmd.CommandPath(), args, err)
				}
			}
			cmd.InitDefaultHelpFlag()
			for _, f := range ref.flags {
				name, short, _ := strings.Cut(f, "/")
				flag := cmd.Flags().Lookup(name)
				if flag == nil {
					flag = cmd.InheritedFlags().Lookup(name)
				}
				switch {
				case flag == nil:
					t.Errorf("%s has no --%s", cmd.CommandPath(), name)
				case short != "" && flag.Shorthand != short:
					t.Errorf("%s --%s has shorthand %q, the reference's is -%s", cmd.CommandPath(), name, flag.Shorthand, short)
				}
			}
		})
	}
}

// TestReferenceFlagsParse: a line of a reference script with the flags
// whose values matter parses (the values are the reference's types).
func TestReferenceFlagsParse(t *testing.T) {
	for _, line := range []string{
		`move volume data -n shop --target-node n1 --containers-cpu-limits 1000m --containers-ram-requests 128Mi`,
		`create publickey --remote-cluster-id milan --public-key AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=`,
		`test network -p a.kubeconfig -p b.kubeconfig --info`,
		`offload namespace --ns-selector team=shop`,
		`unoffload namespace --ns-selector team=shop`,
		`network connect --remote-context milan --gw-server-service-location Local --liqo-namespace liqo --remote-liqo-namespace liqo`,
	} {
		args := ShellWords(line)
		cmd, rest, err := NewRootCommand().Find(args)
		if err == nil {
			err = cmd.ParseFlags(rest)
		}
		if err == nil && cmd.Args != nil {
			err = cmd.Args(cmd, cmd.Flags().Args())
		}
		if err != nil {
			t.Errorf("%s: %v", line, err)
		}
	}
}
