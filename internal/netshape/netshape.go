// Package netshape is a UDP relay that delays and drops datagrams, for
// network experiments on kernels without netem (scripts/cluster.sh runs one
// in front of each node when a profile asks for delay or loss and `tc qdisc
// ... netem` is unavailable).
//
// A Relay listens on one address and forwards every datagram to a target,
// and the target's answers back to their sender, each after a fixed delay
// and each dropped with a fixed probability. The nodes talk QUIC (over UDP)
// through it, so a dropped datagram is a real loss that QUIC detects and
// retransmits, as it would on a lossy link. Put one relay in front of each
// node's listener: every datagram of a connection then crosses exactly one
// relay, so a connection sees Delay one way and 2*Delay round trip, like
// netem's delay on each host's egress.
//
// The delay line is FIFO: with a constant delay, order of arrival is order of
// release. A line whose queue is full drops the datagram, as a router's full
// buffer would. Bandwidth is not limited here: tc's tbf qdisc does that (it
// exists where netem does not).
package netshape

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"sync"
	"time"
)

// Config shapes one relay.
type Config struct {
	// Listen is the address clients send to (e.g. 10.250.0.11:7400).
	Listen string
	// Target is where datagrams go on (e.g. 127.0.0.1:7400).
	Target string
	// Delay is added to every datagram, in each direction.
	Delay time.Duration
	// Loss is the probability, 0 to 1, that a datagram is dropped, in each
	// direction.
	Loss float64
	// Seed makes the drops reproducible.
	Seed uint64
	// Idle closes a client's session after this long without traffic
	// (default 5 minutes).
	Idle time.Duration
	// Queue bounds the datagrams waiting in each delay line (default 8192).
	Queue int
}

// Stats counts what a relay did.
type Stats struct {
	Forwarded, Dropped, Overflow uint64
}

// Relay is a running relay.
type Relay struct {
	cfg    Config
	conn   *net.UDPConn
	target *net.UDPAddr
	in     *line // client -> target
	out    *line // target -> client

	mu       sync.Mutex
	sessions map[string]*session
}

type session struct {
	up   *net.UDPConn
	last time.Time
}

// maxDatagram is the largest datagram relayed (QUIC sends at most ~1500).
const maxDatagram = 64 << 10

// New opens the relay's listening socket.
func New(cfg Config) (*Relay, error) {
	if cfg.Loss < 0 || cfg.Loss >= 1 {
		return nil, fmt.Errorf("netshape: loss %v: want a probability in [0, 1)", cfg.Loss)
	}
	if cfg.Delay < 0 {
		return nil, fmt.Errorf("netshape: negative delay %v", cfg.Delay)
	}
	if cfg.Idle == 0 {
		cfg.Idle = 5 * time.Minute
	}
	if cfg.Queue == 0 {
		cfg.Queue = 8192
	}
	la, err := net.ResolveUDPAddr("udp", cfg.Listen)
	if err != nil {
		return nil, fmt.Errorf("netshape: listen address %q: %w", cfg.Listen, err)
	}
	ta, err := net.ResolveUDPAddr("udp", cfg.Target)
	if err != nil {
		return nil, fmt.Errorf("netshape: target address %q: %w", cfg.Target, err)
	}
	conn, err := net.ListenUDP("udp", la)
	if err != nil {
		return nil, fmt.Errorf("netshape: listen on %s: %w", cfg.Listen, err)
	}
	return &Relay{
		cfg: cfg, conn: conn, target: ta, sessions: map[string]*session{},
		in:  newLine(cfg.Delay, cfg.Loss, cfg.Seed, cfg.Queue),
		out: newLine(cfg.Delay, cfg.Loss, cfg.Seed^0x9e3779b97f4a7c15, cfg.Queue),
	}, nil
}

// Addr is the address the relay listens on.
func (r *Relay) Addr() net.Addr { return r.conn.LocalAddr() }

// Stats returns the counts of both directions together.
func (r *Relay) Stats() Stats {
	a, b := r.in.stats(), r.out.stats()
	return Stats{Forwarded: a.Forwarded + b.Forwarded, Dropped: a.Dropped + b.Dropped, Overflow: a.Overflow + b.Overflow}
}

// Run relays until ctx ends, then closes every socket and waits for its
// goroutines.
func (r *Relay) Run(ctx context.Context) error {
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { defer wg.Done(); r.in.run(ctx) }()
	go func() { defer wg.Done(); r.out.run(ctx) }()
	wg.Add(1)
	go func() { // closing the sockets ends every blocked read
		defer wg.Done()
		<-ctx.Done()
		r.conn.Close()
		r.mu.Lock()
		for _, s := range r.sessions {
			s.up.Close()
		}
		r.mu.Unlock()
	}()
	wg.Add(1)
	go func() { defer wg.Done(); r.reap(ctx) }()
	err := r.readClients(ctx, &wg)
	wg.Wait()
	if ctx.Err() != nil {
		return nil
	}
	return err
}

// readClients reads datagrams from clients and queues them for the target,
// opening a session (an upstream socket) per client address.
func (r *Relay) readClients(ctx context.Context, wg *sync.WaitGroup) error {
	buf := make([]byte, maxDatagram)
	for {
		n, from, err := r.conn.ReadFromUDP(buf)
		if err != nil {
			if ctx.Err() != nil || errors.Is(err, net.ErrClosed) {
				return nil
			}
			return fmt.Errorf("netshape: read: %w", err)
		}
		s, err := r.session(ctx, from, wg)
		if err != nil {
			return err
		}
		up := s.up
		r.in.push(buf[:n], func(b []byte) { _, _ = up.Write(b) })
	}
}

func (r *Relay) session(ctx context.Context, from *net.UDPAddr, wg *sync.WaitGroup) (*session, error) {
	key := from.String()
	r.mu.Lock()
	defer r.mu.Unlock()
	if s, ok := r.sessions[key]; ok {
		s.last = time.Now()
		return s, nil
	}
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	up, err := net.DialUDP("udp", nil, r.target)
	if err != nil {
		return nil, fmt.Errorf("netshape: dial target %s: %w", r.target, err)
	}
	s := &session{up: up, last: time.Now()}
	r.sessions[key] = s
	client := *from
	wg.Add(1)
	go func() { // the target's answers to this client
		defer wg.Done()
		buf := make([]byte, maxDatagram)
		for {
			n, err := up.Read(buf)
			if err != nil {
				return // closed by reap or at shutdown
			}
			r.mu.Lock()
			s.last = time.Now()
			r.mu.Unlock()
			r.out.push(buf[:n], func(b []byte) { _, _ = r.conn.WriteToUDP(b, &client) })
		}
	}()
	return s, nil
}

// reap closes sessions idle for longer than cfg.Idle.
func (r *Relay) reap(ctx context.Context) {
	t := time.NewTicker(r.cfg.Idle / 4)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case now := <-t.C:
			r.mu.Lock()
			for k, s := range r.sessions {
				if now.Sub(s.last) > r.cfg.Idle {
					s.up.Close()
					delete(r.sessions, k)
				}
			}
			r.mu.Unlock()
		}
	}
}

// line is one direction's delay line.
type line struct {
	delay time.Duration
	loss  float64
	q     chan packet

	mu  sync.Mutex // guards rng and st
	rng *rand.Rand
	st  Stats
}

type packet struct {
	b    []byte
	due  time.Time
	send func([]byte)
}

func newLine(delay time.Duration, loss float64, seed uint64, queue int) *line {
	return &line{delay: delay, loss: loss, q: make(chan packet, queue), rng: rand.New(rand.NewPCG(seed, seed>>1|1))}
}

// push drops b with the line's probability or queues a copy of it to be
// sent after the delay.
func (l *line) push(b []byte, send func([]byte)) {
	l.mu.Lock()
	drop := l.loss > 0 && l.rng.Float64() < l.loss
	if drop {
		l.st.Dropped++
	}
	l.mu.Unlock()
	if drop {
		return
	}
	p := packet{b: append([]byte(nil), b...), due: time.Now().Add(l.delay), send: send}
	select {
	case l.q <- p:
	default:
		l.mu.Lock()
		l.st.Overflow++
		l.mu.Unlock()
	}
}

// run releases queued datagrams when they are due.
func (l *line) run(ctx context.Context) {
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	for {
		var p packet
		select {
		case <-ctx.Done():
			return
		case p = <-l.q:
		}
		if wait := time.Until(p.due); wait > 0 {
			timer.Reset(wait)
			select {
			case <-ctx.Done():
				return
			case <-timer.C:
			}
		}
		// Counted before it is sent, so whoever has received a datagram
		// sees it in Stats.
		l.mu.Lock()
		l.st.Forwarded++
		l.mu.Unlock()
		p.send(p.b)
	}
}

func (l *line) stats() Stats {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.st
}
