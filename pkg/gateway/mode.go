package gateway

// Mode is the side of the tunnel a gateway is on.
type Mode string

// The two modes: the server listens, the client dials it.
const (
	Server Mode = "server"
	Client Mode = "client"
)
