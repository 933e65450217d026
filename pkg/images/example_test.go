package images_test

import (
	"context"
	"fmt"
	"net"
	"os"

	"github.com/liqo-go/liqo/pkg/images"
)

// Build an image holding only files (as a pod's image volume mounts one),
// serve a registry on loopback and publish the image there under the name
// pods use for it.
func Example() {
	if err := publish(); err != nil {
		fmt.Println(err)
	}
	// Output: example/site v1
}

func publish() error {
	img, err := images.FromEntries([]images.Entry{
		{Path: "/site/index.html", Data: []byte("<h1>hello</h1>\n")},
		{Path: "/site/latest", Link: "index.html"},
	}, images.Config{})
	if err != nil {
		return err
	}
	dir, err := os.MkdirTemp("", "registry-")
	if err != nil {
		return err
	}
	defer func() { _ = os.RemoveAll(dir) }()
	reg, err := images.NewRegistry(dir, nil)
	if err != nil {
		return err
	}
	defer func() { _ = reg.Close() }()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	reg.Serve(l)

	// A node whose containerd mirrors docker.io through this registry now
	// pulls docker.io/example/site:v1 from it.
	if err := images.Push(context.Background(), l.Addr().String(), "docker.io/example/site:v1", img); err != nil {
		return err
	}
	ref, err := images.MirrorRef(l.Addr().String(), "docker.io/example/site:v1")
	if err != nil {
		return err
	}
	fmt.Println(ref.Context().RepositoryStr(), ref.Identifier())
	return nil
}
