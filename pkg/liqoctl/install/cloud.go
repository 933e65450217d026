package install

import (
	"context"
	"fmt"
	"net/netip"
	"strings"

	"github.com/spf13/pflag"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
)

// cloudFlags are the flags of the cloud providers (install aks, eks, gke),
// as the reference's: the cloud's name of the cluster, which is the Liqo
// cluster name unless --cluster-name gives one, and what the reference
// reads the networks from the cloud's API with. This liqoctl has no cloud
// API client: the networks come from --pod-cidr and --service-cidr, and the
// other flags are accepted and ignored, with a warning.
type cloudFlags struct {
	// aks
	resourceGroup, resourceName, subscriptionName, subscriptionID, vnetResourceGroup, fqdn string
	privateLink, disableEndpointCheck                                                      bool
	// eks
	eksClusterName, eksRegion, accessKeyID, secretAccessKey, userName, policyName string
	// gke (its cluster name is --cluster-id, shared with the other providers)
	projectID, zone, region, credentialsPath string
}

// cloudFlag describes one cloud flag: the provider it belongs to and
// whether it only feeds the cloud's API (ignored here).
type cloudFlag struct {
	provider string
	ignored  bool
}

var cloudFlagSet = map[string]cloudFlag{
	"resource-group-name": {"aks", true}, "resource-name": {"aks", false}, "subscription-name": {"aks", true},
	"subscription-id": {"aks", true}, "vnet-resource-group-name": {"aks", true}, "fqdn": {"aks", true},
	"private-link": {"aks", true}, "disable-endpoint-check": {"aks", true},
	"eks-cluster-name": {"eks", false}, "eks-cluster-region": {"eks", true}, "access-key-id": {"eks", true},
	"secret-access-key": {"eks", true}, "user-name": {"eks", true}, "policy-name": {"eks", true},
	"project-id": {"gke", true}, "zone": {"gke", true}, "region": {"gke", true}, "credentials-path": {"gke", true},
}

const ignoredNote = " (accepted for compatibility and ignored: this liqoctl does not call the cloud's API)"

func (c *cloudFlags) bind(fs *pflag.FlagSet) {
	fs.StringVar(&c.resourceGroup, "resource-group-name", "", "install aks: Azure resource group of the cluster"+ignoredNote)
	fs.StringVar(&c.resourceName, "resource-name", "", "install aks: Azure name of the cluster, the default --cluster-name")
	fs.StringVar(&c.subscriptionName, "subscription-name", "", "install aks: Azure subscription of the cluster"+ignoredNote)
	fs.StringVar(&c.subscriptionID, "subscription-id", "", "install aks: Azure subscription ID of the cluster"+ignoredNote)
	fs.StringVar(&c.vnetResourceGroup, "vnet-resource-group-name", "", "install aks: Azure resource group of the cluster's virtual network"+ignoredNote)
	fs.StringVar(&c.fqdn, "fqdn", "", "install aks: the API server's private FQDN"+ignoredNote+"; give --api-server-url")
	fs.BoolVar(&c.privateLink, "private-link", false, "install aks: the cluster is private"+ignoredNote)
	fs.BoolVar(&c.disableEndpointCheck, "disable-endpoint-check", false, "install aks: do not compare the kubeconfig's API server with Azure's"+ignoredNote)
	fs.StringVar(&c.eksClusterName, "eks-cluster-name", "", "install eks: AWS name of the cluster, the default --cluster-name")
	fs.StringVar(&c.eksRegion, "eks-cluster-region", "", "install eks: AWS region of the cluster"+ignoredNote)
	fs.StringVar(&c.accessKeyID, "access-key-id", "", "install eks: AWS access key ID"+ignoredNote)
	fs.StringVar(&c.secretAccessKey, "secret-access-key", "", "install eks: AWS secret access key"+ignoredNote)
	fs.StringVar(&c.userName, "user-name", "", "install eks: AWS IAM user for peering"+ignoredNote)
	fs.StringVar(&c.policyName, "policy-name", "", "install eks: AWS IAM policy for peering"+ignoredNote)
	fs.StringVar(&c.projectID, "project-id", "", "install gke: GCP project of the cluster"+ignoredNote)
	fs.StringVar(&c.zone, "zone", "", "install gke: GCP zone of the cluster"+ignoredNote)
	fs.StringVar(&c.region, "region", "", "install gke: GCP region of the cluster"+ignoredNote)
	fs.StringVar(&c.credentialsPath, "credentials-path", "", "install gke: GCP service account key file"+ignoredNote)
}

// checkCloudFlags refuses a cloud flag given with another provider, and
// lists those given that are ignored.
func checkCloudFlags(fs *pflag.FlagSet, provider string) (ignored []string, err error) {
	fs.Visit(func(f *pflag.Flag) {
		cf, ok := cloudFlagSet[f.Name]
		if !ok || err != nil {
			return
		}
		if cf.provider != provider {
			err = fmt.Errorf("--%s is a flag of liqoctl install %s, not of install %s", f.Name, cf.provider, provider)
			return
		}
		if cf.ignored {
			ignored = append(ignored, "--"+f.Name)
		}
	})
	return ignored, err
}

// cloudName is the cloud's name of the cluster, the Liqo cluster name when
// --cluster-name is not given.
func (o *options) cloudName() string {
	switch o.provider {
	case "aks":
		return o.cloud.resourceName
	case "eks":
		return o.cloud.eksClusterName
	case "gke":
		return o.clusterID
	}
	return ""
}

// cloudHint says how to read a cloud cluster's networks with the cloud's
// own CLI, for the error when --pod-cidr or --service-cidr is missing.
func (o *options) cloudHint() string {
	name := o.cloudName()
	if name == "" {
		name = "NAME"
	}
	switch o.provider {
	case "aks":
		return fmt.Sprintf("az aks show --resource-group %s --name %s --query networkProfile", orWord(o.cloud.resourceGroup, "GROUP"), name)
	case "eks":
		return fmt.Sprintf("aws eks describe-cluster --name %s --region %s (the service CIDR; the pods use the VPC's CIDR)", name, orWord(o.cloud.eksRegion, "REGION"))
	case "gke":
		return fmt.Sprintf("gcloud container clusters describe %s --zone %s --project %s --format='value(clusterIpv4Cidr,servicesIpv4Cidr)'",
			name, orWord(o.cloud.zone, "ZONE"), orWord(o.cloud.projectID, "PROJECT"))
	}
	return ""
}

func orWord(v, word string) string {
	if v == "" {
		return word
	}
	return v
}

// openShiftNetwork is OpenShift's cluster network configuration.
var openShiftNetwork = schema.GroupVersionResource{Group: "config.openshift.io", Version: "v1", Resource: "networks"}

// openShiftNetworks reads the pod and service CIDRs from OpenShift's
// Network "cluster" (config.openshift.io/v1): spec.clusterNetwork[].cidr
// and spec.serviceNetwork[], the first IPv4 of each.
func openShiftNetworks(ctx context.Context, cfg *rest.Config) (pod, svc netip.Prefix, err error) {
	dc, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return pod, svc, err
	}
	obj, err := dc.Resource(openShiftNetwork).Get(ctx, "cluster", metav1.GetOptions{})
	if apierrors.IsNotFound(err) || (err != nil && strings.Contains(err.Error(), "the server could not find the requested resource")) {
		return pod, svc, fmt.Errorf("no OpenShift network configuration (networks.config.openshift.io \"cluster\"): is this an OpenShift cluster?")
	}
	if err != nil {
		return pod, svc, fmt.Errorf("reading OpenShift's network configuration (networks.config.openshift.io \"cluster\"): %w", err)
	}
	clusterNets, _, _ := unstructured.NestedSlice(obj.Object, "spec", "clusterNetwork")
	var podCIDRs []string
	for _, n := range clusterNets {
		if m, ok := n.(map[string]any); ok {
			if s, ok := m["cidr"].(string); ok {
				podCIDRs = append(podCIDRs, s)
			}
		}
	}
	svcCIDRs, _, _ := unstructured.NestedStringSlice(obj.Object, "spec", "serviceNetwork")
	if pod, err = firstIPv4(podCIDRs); err != nil {
		return pod, svc, fmt.Errorf("OpenShift's spec.clusterNetwork: %w", err)
	}
	if svc, err = firstIPv4(svcCIDRs); err != nil {
		return pod, svc, fmt.Errorf("OpenShift's spec.serviceNetwork: %w", err)
	}
	return pod, svc, nil
}

// firstIPv4 is the first IPv4 CIDR of list (the fabric is IPv4).
func firstIPv4(list []string) (netip.Prefix, error) {
	for _, s := range list {
		if p, err := netip.ParsePrefix(s); err == nil && p.Addr().Is4() {
			return p.Masked(), nil
		}
	}
	return netip.Prefix{}, fmt.Errorf("no IPv4 CIDR in %v", list)
}
