//go:build unix

package node

import (
	"context"
	"io"
	"log/slog"
	"syscall"
	"testing"
	"time"

	"github.com/libp2p/go-libp2p/core/crypto"
	"github.com/libp2p/go-libp2p/core/host"
	"github.com/libp2p/go-libp2p/core/network"
	"github.com/libp2p/go-libp2p/core/peer"
)

// BenchmarkTransportBytes sends 64 MiB bodies from one host to another as
// newHost makes them, over TCP (TLS, yamux) and over QUIC, and over TCP
// with Noise as nodes before TLS secured it, on loopback: cpu-ns/B is the
// process's CPU time (both ends, user and system) per byte of body, what a
// node pays to move a lattice round's bytes.
//
//	go test ./node -run '^$' -bench TransportBytes -benchtime 4x -count 3
func BenchmarkTransportBytes(b *testing.B) {
	for _, tr := range []struct {
		name, listen string
		noise        bool
	}{
		{"tcp", "/ip4/127.0.0.1/tcp/0", false}, {"tcp-noise", "/ip4/127.0.0.1/tcp/0", true},
		{"quic", "/ip4/127.0.0.1/udp/0/quic-v1", false},
	} {
		b.Run("transport="+tr.name, func(b *testing.B) {
			from, to := benchHosts(b, tr.listen, tr.noise)
			const size = 64 << 20
			body, got := make([]byte, size), make([]byte, size)
			done := make(chan error, 1)
			to.SetStreamHandler("/cohort/bench", func(s network.Stream) {
				_, err := io.ReadFull(s, got)
				if err == nil {
					_, err = s.Write([]byte{1})
				}
				_ = s.Close()
				done <- err
			})
			ctx := context.Background()
			send := func() {
				s, err := from.NewStream(ctx, to.ID(), "/cohort/bench")
				if err != nil {
					b.Fatal(err)
				}
				if _, err := s.Write(body); err != nil {
					b.Fatal(err)
				}
				_ = s.CloseWrite()
				var ack [1]byte
				if _, err := io.ReadFull(s, ack[:]); err != nil {
					b.Fatal(err)
				}
				_ = s.Close()
				if err := <-done; err != nil {
					b.Fatal(err)
				}
			}
			send() // the connection and the windows warmed up
			b.SetBytes(size)
			b.ResetTimer()
			cpu0 := processCPU(b)
			for i := 0; i < b.N; i++ {
				send()
			}
			b.ReportMetric(float64(processCPU(b)-cpu0)/float64(b.N*size), "cpu-ns/B")
		})
	}
}

// benchHosts starts two hosts listening on listen only, connected: as
// newHost makes them, or with Noise alone when noise is set.
func benchHosts(b *testing.B, listen string, noise bool) (from, to host.Host) {
	g := &memberGater{log: slog.New(slog.NewTextHandler(io.Discard, nil))}
	start := func() host.Host {
		sk, _, err := crypto.GenerateEd25519Key(nil)
		if err != nil {
			b.Fatal(err)
		}
		mk := newHost
		if noise {
			mk = noiseHost
		}
		h, err := mk(sk, []string{listen}, g, true)
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { _ = h.Close() })
		return h
	}
	from, to = start(), start()
	g.setMembers(&Consortium{Members: []Member{{Name: "a", PeerID: from.ID().String()}, {Name: "b", PeerID: to.ID().String()}}})
	if err := from.Connect(context.Background(), peer.AddrInfo{ID: to.ID(), Addrs: to.Addrs()}); err != nil {
		b.Fatal(err)
	}
	return from, to
}

// processCPU is the process's CPU time so far, user and system.
func processCPU(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
