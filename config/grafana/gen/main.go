// Command gen writes the Grafana dashboard JSON (`make generate`).
package main

import (
	"fmt"
	"os"

	"github.com/skyhook-go/skyhook/config/grafana"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: gen <output.json>")
		os.Exit(2)
	}
	data, err := grafana.JSON()
	if err == nil {
		err = os.WriteFile(os.Args[1], data, 0o644)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "grafana dashboard:", err)
		os.Exit(1)
	}
}
