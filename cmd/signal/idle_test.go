//go:build !js

package main

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/meshmpi/meshmpi/signaling"
)

// Keep-alive HTTP connections left idle are closed after the idle timeout
// (item 10 of issue 14: `signal serve` kept them open for good, outside
// the connection limit). 2,000 connections each make one GET /healthz and
// then wait for the server to close them; the test waits for those
// closes, not for a time.
func TestIdleKeepAliveClosed(t *testing.T) {
	const conns = 2000
	sc, err := parseServe([]string{"-secret", secret, "-idle-timeout", "200ms", "-log-level", "error"}, io.Discard)
	require.NoError(t, err)
	srv, err := signaling.NewServer(sc.sig)
	require.NoError(t, err)
	hs := signaling.NewHTTPServer(newHandler(srv, newRegistry(srv, nil, nil), nil, nil), sc.idle)
	ln, err := net.Listen("tcp4", "127.0.0.1:0")
	require.NoError(t, err)
	served := make(chan error, 1)
	go func() { served <- hs.Serve(ln) }()
	t.Cleanup(func() {
		require.NoError(t, srv.Close())
		require.NoError(t, hs.Close())
		require.ErrorIs(t, <-served, http.ErrServerClosed)
	})

	ctx, cancel := context.WithTimeout(context.Background(), time.Minute) // hang guard only
	defer cancel()
	start := time.Now()
	var wg sync.WaitGroup
	errs := make(chan error, conns)
	for range conns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs <- idleClient(ctx, ln.Addr().String())
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
	t.Logf("%d idle keep-alive connections closed by the server %v after they opened (idle timeout %v)", conns, time.Since(start).Round(time.Millisecond), sc.idle)
}

// idleClient makes one keep-alive request and waits until the server
// closes the connection.
func idleClient(ctx context.Context, addr string) error {
	var d net.Dialer
	c, err := d.DialContext(ctx, "tcp4", addr)
	if err != nil {
		return err
	}
	defer c.Close()
	stop := context.AfterFunc(ctx, func() { _ = c.Close() })
	defer stop()
	if _, err := io.WriteString(c, "GET /healthz HTTP/1.1\r\nHost: "+addr+"\r\n\r\n"); err != nil {
		return err
	}
	br := bufio.NewReader(c)
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		return err
	}
	if _, err := io.Copy(io.Discard, resp.Body); err != nil {
		return err
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || resp.Close {
		return errors.New("want a 200 on a keep-alive connection")
	}
	n, err := br.Read(make([]byte, 1))
	if n != 0 || !errors.Is(err, io.EOF) {
		if ctx.Err() != nil {
			return errors.New("the server kept an idle connection open until the hang guard")
		}
		return errors.New("the server sent more than its response")
	}
	return nil
}
