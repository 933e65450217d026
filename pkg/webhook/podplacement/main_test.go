package podplacement_test

import (
	"testing"

	"github.com/liqo-go/liqo/pkg/webhook/internal/servertest"
	"github.com/liqo-go/liqo/pkg/webhook/internal/webhooktest"
)

// running is the manager serving the webhooks.
var running *webhooktest.Manager

// TestMain starts one cluster and a manager serving every webhook: the
// pods are created through the API server, which calls the pod webhook.
func TestMain(m *testing.M) { servertest.Main(m, "podplacement", &running) }
