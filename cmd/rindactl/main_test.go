package main

import (
	"fmt"
	"os"
	"testing"

	"github.com/rindactl/rindactl/internal/store/storetest"
)

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "rindactl-cmd-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	rindactlDir = dir
	code := storetest.Run(m)
	os.RemoveAll(dir)
	os.Exit(code)
}
