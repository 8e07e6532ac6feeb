package netshape

import (
	"context"
	"fmt"
	"net"
	"sync"
	"testing"
	"time"
)

// echo serves UDP on loopback, answering every datagram with itself.
func echo(t *testing.T) *net.UDPConn {
	t.Helper()
	c, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	go func() {
		buf := make([]byte, 2048)
		for {
			n, from, err := c.ReadFromUDP(buf)
			if err != nil {
				return
			}
			c.WriteToUDP(buf[:n], from)
		}
	}()
	return c
}

func start(t *testing.T, cfg Config) *Relay {
	t.Helper()
	cfg.Listen = "127.0.0.1:0"
	r, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { defer wg.Done(); r.Run(ctx) }()
	t.Cleanup(func() { cancel(); wg.Wait() })
	return r
}

// A round trip through the relay takes at least twice the delay (once each
// way), and the answer is the datagram sent, in order.
func TestDelay(t *testing.T) {
	srv := echo(t)
	r := start(t, Config{Target: srv.LocalAddr().String(), Delay: 40 * time.Millisecond})
	c, err := net.DialUDP("udp", nil, r.Addr().(*net.UDPAddr))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	buf := make([]byte, 64)
	for i := range 3 {
		msg := fmt.Sprintf("ping %d", i)
		t0 := time.Now()
		c.Write([]byte(msg))
		c.SetReadDeadline(time.Now().Add(5 * time.Second))
		n, err := c.Read(buf)
		if err != nil {
			t.Fatal(err)
		}
		if rtt := time.Since(t0); rtt < 80*time.Millisecond {
			t.Errorf("round trip %v through a 40 ms relay, want at least 80 ms", rtt)
		}
		if string(buf[:n]) != msg {
			t.Errorf("got %q, want %q", buf[:n], msg)
		}
	}
	// A burst keeps its order.
	for i := range 50 {
		c.Write([]byte{byte(i)})
	}
	for i := range 50 {
		c.SetReadDeadline(time.Now().Add(5 * time.Second))
		n, err := c.Read(buf)
		if err != nil || n != 1 || buf[0] != byte(i) {
			t.Fatalf("burst datagram %d: %v %v", i, buf[:n], err)
		}
	}
	if st := r.Stats(); st.Forwarded != 106 || st.Dropped != 0 {
		t.Errorf("stats %+v, want 106 forwarded, none dropped", st)
	}
}

// With loss p a datagram is dropped with probability p each way: of 2000
// one-way datagrams at 20% about 1600 arrive (the binomial's standard
// deviation is 18; the seed makes the run repeatable).
func TestLoss(t *testing.T) {
	sink, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	defer sink.Close()
	r := start(t, Config{Target: sink.LocalAddr().String(), Loss: 0.2, Seed: 7})
	c, err := net.DialUDP("udp", nil, r.Addr().(*net.UDPAddr))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	got := make(chan int)
	go func() {
		n, buf := 0, make([]byte, 64)
		for {
			sink.SetReadDeadline(time.Now().Add(time.Second))
			if _, _, err := sink.ReadFromUDP(buf); err != nil {
				got <- n
				return
			}
			n++
		}
	}()
	for i := range 2000 {
		c.Write([]byte{byte(i)})
		if i%50 == 49 {
			time.Sleep(2 * time.Millisecond) // stay well inside the socket buffers
		}
	}
	n := <-got
	if n < 1500 || n > 1700 {
		t.Errorf("%d of 2000 datagrams arrived through 20%% loss, want about 1600", n)
	}
	if st := r.Stats(); st.Dropped+st.Forwarded != 2000 || int(st.Forwarded) != n {
		t.Errorf("stats %+v, %d arrived", st, n)
	}
}

func TestConfigRefused(t *testing.T) {
	for _, cfg := range []Config{
		{Listen: "127.0.0.1:0", Target: "127.0.0.1:1", Loss: 1},
		{Listen: "127.0.0.1:0", Target: "127.0.0.1:1", Loss: -0.1},
		{Listen: "127.0.0.1:0", Target: "127.0.0.1:1", Delay: -time.Second},
		{Listen: "nope", Target: "127.0.0.1:1"},
	} {
		if r, err := New(cfg); err == nil {
			r.conn.Close()
			t.Errorf("%+v accepted", cfg)
		}
	}
}
