package testkit

import (
	"io"
	"net"
	"sync"
	"testing"
	"time"
)

// SlowProxy forwards TCP connections to target and holds every chunk the
// server sends for delay: a real server behind a slow network, so each
// reply takes a while and a signal or a kill lands mid-conversation rather
// than before or after it. It returns the proxy's address; the listener and
// every connection close when the test ends.
func SlowProxy(t testing.TB, target string, delay time.Duration) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var conns []net.Conn
	t.Cleanup(func() {
		l.Close()
		mu.Lock()
		defer mu.Unlock()
		for _, c := range conns {
			c.Close()
		}
	})
	go func() {
		for {
			client, err := l.Accept()
			if err != nil {
				return
			}
			server, err := net.Dial("tcp", target)
			if err != nil {
				client.Close()
				continue
			}
			mu.Lock()
			conns = append(conns, client, server)
			mu.Unlock()
			go func() {
				_, _ = io.Copy(server, client)
				server.Close()
			}()
			go func() {
				buf := make([]byte, 32<<10)
				for {
					n, err := server.Read(buf)
					if n > 0 {
						time.Sleep(delay)
						if _, werr := client.Write(buf[:n]); werr != nil {
							break
						}
					}
					if err != nil {
						break
					}
				}
				client.Close()
			}()
		}
	}()
	return l.Addr().String()
}
