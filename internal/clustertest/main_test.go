package clustertest

import (
	"testing"

	"certa/internal/testcluster"
)

func TestMain(m *testing.M) { testcluster.Main(m) }
