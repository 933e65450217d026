package budget_test

import (
	"testing"

	"github.com/liqo-go/liqo/pkg/webhook/internal/servertest"
	"github.com/liqo-go/liqo/pkg/webhook/internal/webhooktest"
)

// running is the manager serving the webhooks.
var running *webhooktest.Manager

// TestMain starts one cluster and a manager serving every webhook, with
// the small ObjectBudget of servertest.Options for the tests to fill.
func TestMain(m *testing.M) { servertest.Main(m, "budget", &running) }
