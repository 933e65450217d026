package coredns

import (
	"bytes"
	"context"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/liqo-go/liqo/pkg/liqoctl/output"
)

// kubeadmObjects are CoreDNS's objects as kubeadm creates them, with
// image the Deployment's and corefile the ConfigMap's.
func kubeadmObjects(image, corefile string) []runtime.Object {
	meta := metav1.ObjectMeta{Namespace: Namespace, Name: Deployment}
	return []runtime.Object{
		&appsv1.Deployment{ObjectMeta: meta, Spec: appsv1.DeploymentSpec{Template: corev1.PodTemplateSpec{
			Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "coredns", Image: image}}}}}},
		&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: Namespace, Name: ConfigMap}, Data: map[string]string{CorefileKey: corefile}},
		&rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: ClusterRole}, Rules: []rbacv1.PolicyRule{
			{APIGroups: []string{""}, Resources: []string{"endpoints", "services", "pods", "namespaces"}, Verbs: []string{"list", "watch"}},
			{APIGroups: []string{"discovery.k8s.io"}, Resources: []string{"endpointslices"}, Verbs: []string{"list", "watch"}},
		}},
	}
}

// state reads back what Configure may change.
func state(t *testing.T, cs *fake.Clientset) (corefile string, rules int, annotation string) {
	t.Helper()
	ctx := context.Background()
	cm, err := cs.CoreV1().ConfigMaps(Namespace).Get(ctx, ConfigMap, metav1.GetOptions{})
	if err == nil {
		corefile = cm.Data[CorefileKey]
	}
	if role, err := cs.RbacV1().ClusterRoles().Get(ctx, ClusterRole, metav1.GetOptions{}); err == nil {
		rules = len(role.Rules)
	}
	if dep, err := cs.AppsV1().Deployments(Namespace).Get(ctx, Deployment, metav1.GetOptions{}); err == nil {
		annotation = dep.Spec.Template.Annotations[RolloutAnnotation]
	}
	return corefile, rules, annotation
}

func TestConfigure(t *testing.T) {
	noReload := strings.Replace(kubeadmCorefile, "    reload\n", "", 1)
	cases := []struct {
		name      string
		objs      []runtime.Object
		wantErr   string
		corefile  string
		rolled    bool
		unchanged bool
		// says is in the first run's output.
		says string
	}{
		{name: "kubeadm, with reload", objs: kubeadmObjects("registry.k8s.io/coredns/coredns:v1.12.0", kubeadmCorefile), corefile: kubeadmConfigured,
			says: "reload plugin loads it"},
		{name: "without reload: the Deployment rolls", objs: kubeadmObjects("coredns/coredns:1.14.7", noReload),
			corefile: strings.Replace(kubeadmConfigured, "    reload\n", "", 1), rolled: true,
			says: "Deployment kube-system/coredns is rolling"},
		{name: "a version-less image is trusted", objs: kubeadmObjects("my.registry:5000/dns@sha256:0123", kubeadmCorefile), corefile: kubeadmConfigured,
			says: "cannot tell the version of CoreDNS"},
		{name: "a tag and a digest", objs: kubeadmObjects("coredns:1.11.1@sha256:0123", kubeadmCorefile), wantErr: "CoreDNS 1.11.1", unchanged: true},
		{name: "too old a CoreDNS", objs: kubeadmObjects("registry.k8s.io/coredns/coredns:v1.11.3", kubeadmCorefile),
			wantErr: "CoreDNS 1.11.3", unchanged: true},
		{name: "no kubernetes plugin", objs: kubeadmObjects("coredns:1.12.1", ".:53 {\n    forward . /etc/resolv.conf\n}\n"),
			wantErr: "no kubernetes plugin", unchanged: true},
		{name: "no CoreDNS Deployment", objs: kubeadmObjects("coredns:1.12.1", kubeadmCorefile)[1:],
			wantErr: "is not CoreDNS as Deployment kube-system/coredns", unchanged: true},
		{name: "no ClusterRole", objs: kubeadmObjects("coredns:1.12.1", kubeadmCorefile)[:2],
			wantErr: "no ClusterRole system:coredns", unchanged: true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cs := fake.NewClientset(c.objs...)
			before, rulesBefore, _ := state(t, cs)
			var out bytes.Buffer
			err := Configure(context.Background(), cs, &output.Printer{W: &out})
			corefile, rules, annotation := state(t, cs)
			if c.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), c.wantErr) {
					t.Fatalf("got %v, want an error with %q", err, c.wantErr)
				}
				if !strings.Contains(err.Error(), "by hand") && !strings.Contains(err.Error(), "upgrade CoreDNS") {
					t.Errorf("the error %q names no way out", err)
				}
				if c.unchanged && (corefile != before || rules != rulesBefore || annotation != "") {
					t.Errorf("changed the cluster: Corefile\n%s\n%d rules, annotation %q", corefile, rules, annotation)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if corefile != c.corefile {
				t.Errorf("Corefile:\n%s\nwant:\n%s", corefile, c.corefile)
			}
			if rules != rulesBefore+1 {
				t.Errorf("%d rules, want %d", rules, rulesBefore+1)
			}
			if !strings.Contains(out.String(), c.says) {
				t.Errorf("the output lacks %q:\n%s", c.says, out.String())
			}
			if (annotation != "") != c.rolled {
				t.Errorf("rollout annotation %q, want one: %v\n%s", annotation, c.rolled, out.String())
			}
			// Run again: nothing left to do, nothing changes.
			out.Reset()
			if err := Configure(context.Background(), cs, &output.Printer{W: &out}); err != nil {
				t.Fatal(err)
			}
			corefile2, rules2, annotation2 := state(t, cs)
			if corefile2 != corefile || rules2 != rules || annotation2 != annotation || !strings.Contains(out.String(), "already") {
				t.Errorf("a second run changed something or said nothing of it:\n%s", out.String())
			}
		})
	}
}

func TestAllowsServiceImports(t *testing.T) {
	rule := func(groups, resources, verbs string) rbacv1.PolicyRule {
		return rbacv1.PolicyRule{APIGroups: strings.Fields(groups), Resources: strings.Fields(resources), Verbs: strings.Fields(verbs)}
	}
	for _, c := range []struct {
		rules []rbacv1.PolicyRule
		want  bool
	}{
		{nil, false},
		{[]rbacv1.PolicyRule{rule("multicluster.x-k8s.io", "serviceimports", "list watch")}, true},
		{[]rbacv1.PolicyRule{rule("multicluster.x-k8s.io", "serviceimports", "list")}, false},
		{[]rbacv1.PolicyRule{rule("multicluster.x-k8s.io", "serviceimports", "list"), rule("*", "*", "watch")}, true},
		{[]rbacv1.PolicyRule{rule("multicluster.x-k8s.io", "serviceexports", "list watch")}, false},
	} {
		if got := allowsServiceImports(c.rules); got != c.want {
			t.Errorf("%v: %v, want %v", c.rules, got, c.want)
		}
	}
}
