package mailauth_test

import (
	"testing"

	"github.com/rindactl/rindactl/internal/store/storetest"
)

func TestMain(m *testing.M) { storetest.Main(m) }
