// Package coredns configures a cluster's CoreDNS to serve the
// Multi-Cluster Services zone clusterset.local with CoreDNS's own
// kubernetes plugin option "multicluster" (CoreDNS 1.12 or later), for
// liqoctl install --configure-dns: the Corefile edit (AddClustersetZone,
// pure) and the steps on the cluster (Configure).
package coredns

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/version"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/util/retry"
	mcsv1beta1 "sigs.k8s.io/mcs-api/pkg/apis/v1beta1"

	"github.com/liqo-go/liqo/pkg/liqoctl/output"
)

// Where kubeadm, and most distributions after it, deploy CoreDNS.
const (
	Namespace   = "kube-system"
	Deployment  = "coredns"
	ConfigMap   = "coredns"
	CorefileKey = "Corefile"
	ClusterRole = "system:coredns"
)

// RolloutAnnotation, on CoreDNS's pod template, holds a digest of the
// Corefile liqoctl wrote: changing it rolls the Deployment, so that a
// CoreDNS without the reload plugin loads the new Corefile.
const RolloutAnnotation = "liqo.io/corefile-digest"

// minVersion is the first CoreDNS release with the multicluster option.
var minVersion = version.MustParseGeneric("1.12.0")

// Configure makes the cluster's CoreDNS serve ClustersetZone: it lets
// CoreDNS's service account list and watch ServiceImports (ClusterRole
// system:coredns), then edits the Corefile, in that order, since the new
// Corefile makes CoreDNS list them. CoreDNS then loads the Corefile
// through its reload plugin or, without one, as its Deployment is rolled;
// no pod is deleted. Anything already in place is left as it is. Where
// the DNS is not CoreDNS as kubeadm deploys it, it fails naming the
// manual step.
func Configure(ctx context.Context, cs kubernetes.Interface, p *output.Printer) error {
	dep, err := cs.AppsV1().Deployments(Namespace).Get(ctx, Deployment, metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
		return fmt.Errorf("the cluster's DNS is not CoreDNS as Deployment %s/%s (another DNS, or a managed one): %s",
			Namespace, Deployment, ManualDNSStep)
	case err != nil:
		return fmt.Errorf("reading the CoreDNS Deployment %s/%s: %w", Namespace, Deployment, err)
	}
	if err := checkVersion(dep, p); err != nil {
		return err
	}
	cm, err := cs.CoreV1().ConfigMaps(Namespace).Get(ctx, ConfigMap, metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
		return fmt.Errorf("CoreDNS has no ConfigMap %s/%s with its Corefile: %s", Namespace, ConfigMap, ManualDNSStep)
	case err != nil:
		return fmt.Errorf("reading the CoreDNS ConfigMap %s/%s: %w", Namespace, ConfigMap, err)
	}
	corefile, ok := cm.Data[CorefileKey]
	if !ok {
		return fmt.Errorf("the ConfigMap %s/%s has no %s key: %s", Namespace, ConfigMap, CorefileKey, ManualDNSStep)
	}
	edited, err := AddClustersetZone(corefile)
	if err != nil {
		return fmt.Errorf("the Corefile in ConfigMap %s/%s: %w", Namespace, ConfigMap, err)
	}

	p.Step("Letting CoreDNS read ServiceImports (ClusterRole %s)", ClusterRole)
	if err := grantServiceImports(ctx, cs, p); err != nil {
		return err
	}

	p.Step("Serving %s from CoreDNS (ConfigMap %s/%s)", ClustersetZone, Namespace, ConfigMap)
	if edited == corefile {
		p.Info("CoreDNS already serves %s", ClustersetZone)
		return nil
	}
	err = retry.RetryOnConflict(retry.DefaultRetry, func() error {
		// Edited again on a conflict: someone changed the Corefile meanwhile.
		cur, err := cs.CoreV1().ConfigMaps(Namespace).Get(ctx, ConfigMap, metav1.GetOptions{})
		if err != nil {
			return err
		}
		if _, ok := cur.Data[CorefileKey]; !ok {
			return fmt.Errorf("the %s key was removed meanwhile", CorefileKey)
		}
		if edited, err = AddClustersetZone(cur.Data[CorefileKey]); err != nil {
			return err
		}
		cur.Data[CorefileKey] = edited
		_, err = cs.CoreV1().ConfigMaps(Namespace).Update(ctx, cur, metav1.UpdateOptions{})
		return err
	})
	if err != nil {
		return fmt.Errorf("updating the Corefile in ConfigMap %s/%s: %w", Namespace, ConfigMap, err)
	}
	p.Info("Corefile updated: the kubernetes plugin serves %s (multicluster %s)", ClustersetZone, ClustersetZone)

	if Reloads(edited) {
		p.Info("CoreDNS's reload plugin loads it once the kubelet has updated the mounted ConfigMap (usually within a minute or two)")
		return nil
	}
	return roll(ctx, cs, edited, p)
}

// checkVersion refuses a CoreDNS older than minVersion, whose kubernetes
// plugin would reject the multicluster option and stop serving. An image
// without a version in its tag (a digest, a build of one's own) is taken
// on trust, with a warning.
func checkVersion(dep *appsv1.Deployment, p *output.Printer) error {
	image := ""
	for _, c := range dep.Spec.Template.Spec.Containers {
		if c.Name == "coredns" || len(dep.Spec.Template.Spec.Containers) == 1 {
			image = c.Image
		}
	}
	// name[:tag][@digest]: the digest's "sha256:" is no tag.
	name, _, _ := strings.Cut(image, "@")
	tag := ""
	if i := strings.LastIndexByte(name, ':'); i > strings.LastIndexByte(name, '/') {
		tag = name[i+1:]
	}
	v, err := version.ParseGeneric(tag)
	if err != nil {
		p.Warn("cannot tell the version of CoreDNS from its image %q: it needs 1.12 or later for the multicluster option", image)
		return nil
	}
	if v.LessThan(minVersion) {
		return fmt.Errorf("CoreDNS %s (image %s) has no multicluster option (1.12 or later has): upgrade CoreDNS and run again, or serve %s otherwise",
			v, image, ClustersetZone)
	}
	return nil
}

// grantServiceImports adds to ClusterRole system:coredns the rule to list
// and watch ServiceImports, unless its rules allow it already.
func grantServiceImports(ctx context.Context, cs kubernetes.Interface, p *output.Printer) error {
	roles := cs.RbacV1().ClusterRoles()
	var added bool
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		role, err := roles.Get(ctx, ClusterRole, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return fmt.Errorf("there is no ClusterRole %s for CoreDNS's service account: %s", ClusterRole, ManualDNSStep)
		}
		if err != nil {
			return fmt.Errorf("reading ClusterRole %s: %w", ClusterRole, err)
		}
		if allowsServiceImports(role.Rules) {
			return nil
		}
		role.Rules = append(role.Rules, rbacv1.PolicyRule{APIGroups: []string{mcsv1beta1.GroupName},
			Resources: []string{"serviceimports"}, Verbs: []string{"list", "watch"}})
		if _, err := roles.Update(ctx, role, metav1.UpdateOptions{}); err != nil {
			return err
		}
		added = true
		return nil
	})
	switch {
	case err != nil:
		return err
	case added:
		p.Info("ClusterRole %s allows listing and watching ServiceImports", ClusterRole)
	default:
		p.Info("ClusterRole %s already allows listing and watching ServiceImports", ClusterRole)
	}
	return nil
}

// allowsServiceImports tells whether rules let list and watch
// ServiceImports, wildcards included.
func allowsServiceImports(rules []rbacv1.PolicyRule) bool {
	has := func(list []string, v string) bool {
		return slices.Contains(list, v) || slices.Contains(list, rbacv1.ResourceAll)
	}
	for _, verb := range []string{"list", "watch"} {
		if !slices.ContainsFunc(rules, func(r rbacv1.PolicyRule) bool {
			return has(r.APIGroups, mcsv1beta1.GroupName) && has(r.Resources, "serviceimports") && has(r.Verbs, verb)
		}) {
			return false
		}
	}
	return true
}

// roll changes CoreDNS's pod template annotation RolloutAnnotation to the
// Corefile's digest: the Deployment replaces its pods one by one, as
// kubectl rollout restart does, and the new ones read the new Corefile.
func roll(ctx context.Context, cs kubernetes.Interface, corefile string, p *output.Printer) error {
	sum := sha256.Sum256([]byte(corefile))
	patch, err := json.Marshal(map[string]any{"spec": map[string]any{"template": map[string]any{"metadata": map[string]any{
		"annotations": map[string]string{RolloutAnnotation: hex.EncodeToString(sum[:8])}}}}})
	if err != nil {
		return err
	}
	if _, err := cs.AppsV1().Deployments(Namespace).Patch(ctx, Deployment, types.StrategicMergePatchType, patch, metav1.PatchOptions{}); err != nil {
		return fmt.Errorf("rolling the CoreDNS Deployment %s/%s: %w", Namespace, Deployment, err)
	}
	p.Info("CoreDNS has no reload plugin: its Deployment %s/%s is rolling (pod template annotation %s) to load the new Corefile",
		Namespace, Deployment, RolloutAnnotation)
	return nil
}
