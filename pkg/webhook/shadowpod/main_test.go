package shadowpod_test

import (
	"testing"

	"github.com/liqo-go/liqo/pkg/webhook/internal/servertest"
	"github.com/liqo-go/liqo/pkg/webhook/internal/webhooktest"
)

// running is the manager serving the webhooks.
var running *webhooktest.Manager

// TestMain starts one cluster and a manager serving every webhook: the
// ShadowPods are sent through the API server, as consumers send them.
func TestMain(m *testing.M) { servertest.Main(m, "shadowpod", &running) }
