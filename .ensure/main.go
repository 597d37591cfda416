package main

import (
	"context"
	"fmt"
	"os"

	"github.com/skyhook-go/skyhook/cmd/skyhook/sandbox/binaries"
)

func main() {
	p, err := binaries.EnsureKubeProxy(context.Background(), binaries.Options{Log: os.Stderr})
	fmt.Println(p, err)
}
