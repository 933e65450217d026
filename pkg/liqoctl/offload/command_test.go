package offload

import (
	"errors"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	offv1beta1 "github.com/liqo-go/liqo/apis/offloading/v1beta1"
	"github.com/liqo-go/liqo/pkg/consts"
)

// terms renders a NodeSelector compactly: terms joined by " | ",
// requirements by " & ".
func terms(s corev1.NodeSelector) string {
	var out []string
	for _, t := range s.NodeSelectorTerms {
		var reqs []string
		for _, r := range t.MatchExpressions {
			reqs = append(reqs, r.Key+" "+string(r.Operator)+" "+strings.Join(r.Values, ","))
		}
		out = append(out, strings.Join(reqs, " & "))
	}
	return strings.Join(out, " | ")
}

func TestClusterSelector(t *testing.T) {
	cases := []struct {
		name    string
		flags   []string
		want    string
		wantErr string
	}{
		{"none selects all", nil, "", ""},
		{"equality", []string{"topology.liqo.io/region=south"}, "topology.liqo.io/region In south", ""},
		{"the documentation's AND", []string{"region in (europe,us-west), !staging"}, "region In europe,us-west & staging DoesNotExist ", ""},
		{"the documentation's OR", []string{"region in (europe,us-west)", "!staging"}, "region In europe,us-west | staging DoesNotExist ", ""},
		{"not equal and exists", []string{"tier!=gold,gpu"}, "gpu Exists  & tier NotIn gold", ""},
		{"numeric", []string{"cores>4"}, "cores Gt 4", ""},
		{"syntax error", []string{"region in (a"}, "", `--selector "region in (a"`},
		{"empty", []string{" "}, "", "must not be empty"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := ClusterSelector(c.flags)
			if c.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), c.wantErr) {
					t.Fatalf("got %v, want an error containing %q", err, c.wantErr)
				}
				return
			}
			if err != nil || terms(got) != c.want {
				t.Fatalf("got %q, %v; want %q", terms(got), err, c.want)
			}
		})
	}
}

func TestManifest(t *testing.T) {
	ok := func(o Options) Options {
		if o.Namespace == "" {
			o.Namespace = "liqo-demo"
		}
		if o.NamespaceMappingStrategy == "" {
			o.NamespaceMappingStrategy = "DefaultName"
		}
		if o.PodOffloadingStrategy == "" {
			o.PodOffloadingStrategy = "LocalAndRemote"
		}
		return o
	}
	cases := []struct {
		name    string
		o       Options
		wantErr string
	}{
		{"defaults", ok(Options{}), ""},
		{"selected name", ok(Options{NamespaceMappingStrategy: "SelectedName", RemoteNamespaceName: "elsewhere"}), ""},
		{"selected name missing", ok(Options{NamespaceMappingStrategy: "SelectedName"}), "needs --remote-namespace-name"},
		{"remote name without SelectedName", ok(Options{RemoteNamespaceName: "elsewhere"}), "needs --namespace-mapping-strategy SelectedName"},
		{"bad remote name", ok(Options{NamespaceMappingStrategy: "SelectedName", RemoteNamespaceName: "Else_where"}), "not a valid namespace name"},
		{"bad mapping", ok(Options{NamespaceMappingStrategy: "Same"}), "--namespace-mapping-strategy must be"},
		{"bad pods", ok(Options{PodOffloadingStrategy: "Anywhere"}), "--pod-offloading-strategy must be"},
		{"bad namespace", ok(Options{Namespace: "Liqo_Demo"}), "not a valid namespace name"},
		{"bad selector", ok(Options{Selectors: []string{"a in (b"}}), "--selector"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := c.o.Manifest()
			if c.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), c.wantErr) {
					t.Fatalf("got %v, want an error containing %q", err, c.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got.Name != offv1beta1.NamespaceOffloadingName || got.Namespace != c.o.Namespace || got.Kind != "NamespaceOffloading" {
				t.Errorf("manifest %s/%s of kind %q", got.Namespace, got.Name, got.Kind)
			}
		})
	}
}

func TestOutcome(t *testing.T) {
	nsof := func(gen, observed int64, phase offv1beta1.OffloadingPhase, conds map[string]offv1beta1.RemoteNamespaceConditions) *offv1beta1.NamespaceOffloading {
		return &offv1beta1.NamespaceOffloading{ObjectMeta: metav1.ObjectMeta{Namespace: "demo", Generation: gen},
			Status: offv1beta1.NamespaceOffloadingStatus{ObservedGeneration: observed, OffloadingPhase: phase, RemoteNamespacesConditions: conds}}
	}
	failed := map[string]offv1beta1.RemoteNamespaceConditions{
		"milan": {{Type: offv1beta1.NamespaceOffloadingRequired, Status: corev1.ConditionFalse, Reason: "ClusterNotSelected"}},
		"naples": {{Type: offv1beta1.NamespaceOffloadingRequired, Status: corev1.ConditionTrue, Reason: "ClusterSelected"},
			{Type: offv1beta1.NamespaceReady, Status: corev1.ConditionFalse, Reason: "RemoteNameTooLong", Message: "too long"}},
	}
	cases := []struct {
		name    string
		in      *offv1beta1.NamespaceOffloading
		notYet  bool
		wantErr string
	}{
		{"not processed", nsof(1, 0, "", nil), true, ""},
		{"stale phase", nsof(2, 1, offv1beta1.ReadyOffloadingPhase, nil), true, ""},
		{"in progress", nsof(1, 1, offv1beta1.InProgressOffloadingPhase, nil), true, ""},
		{"ready", nsof(1, 1, offv1beta1.ReadyOffloadingPhase, nil), false, ""},
		{"all failed", nsof(1, 1, offv1beta1.AllFailedOffloadingPhase, failed), false, "phase AllFailed: naples: RemoteNameTooLong (too long)"},
		{"some failed, others pending", nsof(1, 1, offv1beta1.SomeFailedOffloadingPhase, map[string]offv1beta1.RemoteNamespaceConditions{
			"naples": failed["naples"],
			"milan": {{Type: offv1beta1.NamespaceOffloadingRequired, Status: corev1.ConditionTrue},
				{Type: offv1beta1.NamespaceReady, Status: corev1.ConditionUnknown}}}), true, ""},
		{"nothing selected", nsof(1, 1, offv1beta1.NoClusterSelectedOffloadingPhase, nil), false, "phase NoClusterSelected"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := outcome(c.in)
			switch {
			case c.notYet:
				if !errors.Is(err, errNotYet) {
					t.Fatalf("got %v, want to keep waiting", err)
				}
			case c.wantErr == "":
				if err != nil {
					t.Fatalf("got %v, want success", err)
				}
			default:
				if err == nil || errors.Is(err, errNotYet) || !strings.Contains(err.Error(), c.wantErr) || strings.Contains(err.Error(), "milan") {
					t.Fatalf("got %v, want a final error with %q and no word on the unselected cluster", err, c.wantErr)
				}
			}
		})
	}
}

// TestNsSelectorArgs: a namespace command takes a NAME or --ns-selector,
// exactly one of them.
func TestNsSelectorArgs(t *testing.T) {
	for _, c := range []struct {
		args     []string
		selector string
		ok       bool
	}{
		{[]string{"shop"}, "", true}, {nil, "team=shop", true},
		{nil, "", false}, {[]string{"shop"}, "team=shop", false}, {[]string{"a", "b"}, "", false},
	} {
		sel := c.selector
		if err := namespaceArgs(&sel)(nil, c.args); (err == nil) != c.ok {
			t.Errorf("%v --ns-selector %q: %v", c.args, c.selector, err)
		}
	}
}

// TestLiqoOwnNamespaces: --ns-selector never selects Liqo's namespace, a
// tenant namespace or a twin made for a consumer.
func TestLiqoOwnNamespaces(t *testing.T) {
	ns := func(name string, labels map[string]string) *corev1.Namespace {
		return &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels}}
	}
	for n, want := range map[*corev1.Namespace]bool{
		ns("liqo", nil):              true,
		ns("liqo-tenant-milan", nil): true,
		ns("shop-rome", map[string]string{consts.TwinNamespaceLabel: "true"}): true,
		ns("tenant", map[string]string{consts.TenantNamespaceLabel: "true"}):  true,
		ns("shop", map[string]string{"team": "shop"}):                         false,
	} {
		if got := liqoOwn(n, "liqo"); got != want {
			t.Errorf("%s: %v", n.Name, got)
		}
	}
}
