// Command genchart writes the Helm chart's files generated from the code
// (make generate).
package main

import (
	"fmt"
	"os"

	"github.com/liqo-go/liqo/deploy/charts/liqo/gen"
)

func main() {
	dir := "deploy/charts/liqo"
	if len(os.Args) > 1 {
		dir = os.Args[1]
	}
	err := gen.Write(dir)
	if err == nil {
		err = gen.WriteValues(gen.ValuesPage, dir)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "genchart:", err)
		os.Exit(1)
	}
}
