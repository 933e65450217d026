package images_test

import (
	"context"
	"fmt"
	"log"
	"net"
	"os"

	"github.com/liqo-go/liqo/pkg/images"
)

// Build an image holding only files (as a pod's image volume mounts one),
// serve a registry on loopback and publish the image there under the name
// pods use for it.
func Example() {
	img, err := images.FromEntries([]images.Entry{
		{Path: "/site/index.html", Data: []byte("<h1>hello</h1>\n")},
		{Path: "/site/latest", Link: "index.html"},
	}, images.Config{})
	if err != nil {
		log.Fatal(err)
	}

	dir, err := os.MkdirTemp("", "registry-")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	reg, err := images.NewRegistry(dir, nil)
	if err != nil {
		log.Fatal(err)
	}
	defer reg.Close()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		log.Fatal(err)
	}
	reg.Serve(l)

	// A node whose containerd mirrors docker.io through this registry now
	// pulls docker.io/example/site:v1 from it.
	if err := images.Push(context.Background(), l.Addr().String(), "docker.io/example/site:v1", img); err != nil {
		log.Fatal(err)
	}
	ref, err := images.MirrorRef(l.Addr().String(), "docker.io/example/site:v1")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(ref.Context().RepositoryStr(), ref.Identifier())
	// Output: example/site v1
}
