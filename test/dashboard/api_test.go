package dashboard

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/liqo-go/liqo/apis"
	offv1beta1 "github.com/liqo-go/liqo/apis/offloading/v1beta1"
	"github.com/liqo-go/liqo/pkg/liqoctl/dashboard"
	"github.com/liqo-go/liqo/test/harness"
)

// getState reads GET /api/state, as the page's first picture.
func getState() (*dashboard.State, error) {
	resp, err := http.Get(server.URL + "api/state")
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET /api/state: %s", resp.Status)
	}
	var st dashboard.State
	return &st, json.NewDecoder(resp.Body).Decode(&st)
}

// waitState waits until the API's state satisfies cond, which returns
// what is still missing ("" when satisfied), and returns that state.
func waitState(ctx context.Context, t *testing.T, what string, cond func(*dashboard.State) string) *dashboard.State {
	t.Helper()
	var st *dashboard.State
	harness.Eventually(ctx, t, what, func() (bool, error) {
		var err error
		if st, err = getState(); err != nil {
			return false, err
		}
		if missing := cond(st); missing != "" {
			return false, fmt.Errorf("%s", missing)
		}
		return true, nil
	})
	return st
}

func peeringIDs(st *dashboard.State) []string {
	var out []string
	for _, p := range st.Peerings {
		out = append(out, p.ID)
	}
	return out
}

func findPeering(st *dashboard.State, id string) *dashboard.Peering {
	for i := range st.Peerings {
		if st.Peerings[i].ID == id {
			return &st.Peerings[i]
		}
	}
	return nil
}

func findNamespace(st *dashboard.State, cluster, name string) *dashboard.Namespace {
	for i := range st.Namespaces {
		if st.Namespaces[i].Cluster == cluster && st.Namespaces[i].Name == name {
			return &st.Namespaces[i]
		}
	}
	return nil
}

// steady is the picture of the setup: three watched clusters, rome
// consuming from milan and naples, both peerings healthy, shop offloaded
// to both with its pods placed.
func steady(st *dashboard.State) string {
	var ids []string
	for _, c := range st.Clusters {
		if !c.Watched || c.Error != "" {
			return fmt.Sprintf("cluster %s not watched: %q", c.ID, c.Error)
		}
		ids = append(ids, c.ID)
	}
	if want := []string{"milan", "naples", "rome"}; !slices.Equal(ids, want) {
		return fmt.Sprintf("clusters %v, want %v", ids, want)
	}
	if got, want := peeringIDs(st), []string{"rome->milan", "rome->naples"}; !slices.Equal(got, want) {
		return fmt.Sprintf("peerings %v, want %v", got, want)
	}
	for _, p := range st.Peerings {
		if p.Health != dashboard.HealthHealthy {
			return fmt.Sprintf("peering %s is %s (auth %+v, offloading %+v)", p.ID, p.Health, p.Authentication, p.Offloading)
		}
	}
	ns := findNamespace(st, "rome", offloadedNS)
	if ns == nil || len(ns.Twins) != 2 || ns.RemotePods["milan"] != 1 || ns.LocalPods != 1 {
		return fmt.Sprintf("namespace %s: %+v", offloadedNS, ns)
	}
	for _, tw := range ns.Twins {
		if tw.State != dashboard.TwinReady || tw.Name != twinNS {
			return fmt.Sprintf("twin of %s on %s: %+v", offloadedNS, tw.Cluster, tw)
		}
	}
	if len(st.TroubledPods) == 0 {
		return "no troubled pod yet"
	}
	return ""
}

// TestAPIFacts: GET /api/state says what the clusters hold.
func TestAPIFacts(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	st := waitState(ctx, t, "the setup's picture", steady)

	t.Run("peerings: modules, slices and usage", func(t *testing.T) {
		for _, id := range []string{"rome->milan", "rome->naples"} {
			p := findPeering(st, id)
			if p.Authentication.Status != dashboard.HealthHealthy || p.Offloading.Status != dashboard.HealthHealthy ||
				p.Networking.Status != dashboard.HealthDisabled {
				t.Errorf("%s: modules %+v %+v %+v, want authentication and offloading Healthy, networking Disabled",
					id, p.Authentication, p.Offloading, p.Networking)
			}
			if !slices.Equal(p.SeenBy, []string{"rome", p.Provider}) {
				t.Errorf("%s is seen by %v, want both sides", id, p.SeenBy)
			}
			if len(p.Slices) != 1 || p.Slices[0].Requested["cpu"] != "4" || p.Slices[0].Granted["cpu"] == "" || p.Slices[0].Resources != "Accepted" {
				t.Errorf("%s: slices %+v, want one asking cpu 4, accepted", id, p.Slices)
			}
			if len(p.VirtualNodes) != 1 || !p.VirtualNodes[0].Ready {
				t.Errorf("%s: virtual nodes %+v", id, p.VirtualNodes)
			}
		}
		// web-milan runs on milan; naples runs nothing of rome's: it
		// refused the one pod placed there.
		if used := findPeering(st, "rome->milan").Used; used["cpu"] != "250m" || used["memory"] != "64Mi" {
			t.Errorf("rome->milan used %v, want web-milan's requests", used)
		}
		if used := findPeering(st, "rome->naples").Used; len(used) != 0 {
			t.Errorf("rome->naples used %v, want nothing: naples refused the pod", used)
		}
	})

	t.Run("the offloaded namespace and its twins", func(t *testing.T) {
		ns := findNamespace(st, "rome", offloadedNS)
		if ns.Phase != string(offv1beta1.ReadyOffloadingPhase) || ns.PodStrategy != "LocalAndRemote" {
			t.Errorf("namespace %+v", ns)
		}
		var clusters []string
		for _, tw := range ns.Twins {
			clusters = append(clusters, tw.Cluster)
		}
		if !slices.Equal(clusters, []string{"milan", "naples"}) {
			t.Errorf("twins on %v, want milan and naples", clusters)
		}
	})

	t.Run("the pod naples refused, with naples's reason", func(t *testing.T) {
		st := waitState(ctx, t, "the refused pod", func(st *dashboard.State) string {
			for _, p := range st.TroubledPods {
				if p.Name == "privileged-naples" && p.Trouble == "OffloadingBackOff" {
					return ""
				}
			}
			return fmt.Sprintf("troubled pods %+v", st.TroubledPods)
		})
		for _, p := range st.TroubledPods {
			if p.Name != "privileged-naples" {
				t.Errorf("pod %s/%s is shown in trouble (%s: %s)", p.Namespace, p.Name, p.Trouble, p.Message)
				continue
			}
			if p.Cluster != "rome" || p.Provider != "naples" || !strings.Contains(p.Message, "naples refused") || !strings.Contains(p.Message, "privileged") {
				t.Errorf("refused pod %+v, want rome's pod on naples with naples's reason", p)
			}
		}
	})

	t.Run("peering events", func(t *testing.T) {
		kinds := map[string]bool{}
		for _, e := range st.Events {
			kinds[e.Kind] = true
			if e.Time.IsZero() || e.Reason == "" || e.Cluster == "" {
				t.Errorf("event %+v lacks its time, reason or cluster", e)
			}
		}
		if len(kinds) == 0 {
			t.Fatalf("no peering event")
		}
		if !slices.IsSortedFunc(st.Events, func(a, b dashboard.Event) int { return b.Time.Compare(a.Time) }) {
			t.Errorf("events not newest first")
		}
		t.Logf("events about %v", kinds)
	})

	t.Run("another host name is refused", func(t *testing.T) {
		req, _ := http.NewRequest(http.MethodGet, server.URL+"api/state", nil)
		req.Host = "attacker.example:80"
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusForbidden {
			t.Errorf("GET /api/state with Host %s: %s, want 403", req.Host, resp.Status)
		}
	})
}

// TestAPILiveUpdate: a namespace offloaded while the dashboard runs
// reaches the API within a few seconds, from the watches.
func TestAPILiveUpdate(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	rome, err := client.New(tb.Cluster("rome").Config, client.Options{Scheme: apis.NewScheme()})
	if err != nil {
		t.Fatal(err)
	}
	if err := rome.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "live"}}); err != nil {
		t.Fatal(err)
	}
	before, err := getState()
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	if err := rome.Create(ctx, &offv1beta1.NamespaceOffloading{ObjectMeta: metav1.ObjectMeta{Name: offv1beta1.NamespaceOffloadingName, Namespace: "live"},
		Spec: offv1beta1.NamespaceOffloadingSpec{PodOffloadingStrategy: offv1beta1.LocalAndRemotePodOffloadingStrategy}}); err != nil {
		t.Fatal(err)
	}
	within, cancelWithin := context.WithTimeout(ctx, 3*time.Second)
	defer cancelWithin()
	st := waitState(within, t, "namespace live in the API", func(st *dashboard.State) string {
		if findNamespace(st, "rome", "live") == nil {
			return "not yet"
		}
		return ""
	})
	t.Logf("namespace live shown %s after its NamespaceOffloading was created (version %d → %d)", time.Since(start).Round(time.Millisecond), before.Version, st.Version)
	if st.Version <= before.Version {
		t.Errorf("version %d after %d: a change must raise it", st.Version, before.Version)
	}
	// Gone again, so that the page's tests see the setup's picture.
	if err := rome.Delete(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "live"}}); err != nil {
		t.Fatal(err)
	}
	waitState(ctx, t, "namespace live gone from the API", func(st *dashboard.State) string {
		if ns := findNamespace(st, "rome", "live"); ns != nil {
			return "still there: " + ns.Phase
		}
		return ""
	})
}
