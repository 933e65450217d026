package peeringuser

import (
	"bufio"
	"context"
	"crypto/tls"
	"encoding/base64"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"time"

	"golang.org/x/net/proxy"
)

// dial opens a TCP connection to addr, through the proxy proxyURL if it is
// not empty: an HTTP CONNECT tunnel for an http or https proxy, SOCKS5 for
// a socks5 one (the schemes client-go's proxy-url takes).
func dial(ctx context.Context, proxyURL, addr string, timeout time.Duration) (net.Conn, error) {
	d := &net.Dialer{Timeout: timeout}
	if proxyURL == "" {
		return d.DialContext(ctx, "tcp", addr)
	}
	u, err := url.Parse(proxyURL)
	if err != nil {
		return nil, fmt.Errorf("proxy URL %q: %w", proxyURL, err)
	}
	switch u.Scheme {
	case "socks5":
		var auth *proxy.Auth
		if u.User != nil {
			pw, _ := u.User.Password()
			auth = &proxy.Auth{User: u.User.Username(), Password: pw}
		}
		sd, err := proxy.SOCKS5("tcp", u.Host, auth, d)
		if err != nil {
			return nil, err
		}
		return sd.(proxy.ContextDialer).DialContext(ctx, "tcp", addr)
	case "http", "https":
		return connectTunnel(ctx, d, u, addr)
	}
	return nil, fmt.Errorf("proxy URL %q: scheme %q is not http, https or socks5", proxyURL, u.Scheme)
}

// connectTunnel asks the HTTP proxy u for a tunnel to addr.
func connectTunnel(ctx context.Context, d *net.Dialer, u *url.URL, addr string) (net.Conn, error) {
	hostport := u.Host
	if u.Port() == "" {
		hostport = net.JoinHostPort(u.Hostname(), map[string]string{"http": "80", "https": "443"}[u.Scheme])
	}
	conn, err := d.DialContext(ctx, "tcp", hostport)
	if err != nil {
		return nil, fmt.Errorf("reaching the proxy %s: %w", u.Redacted(), err)
	}
	if u.Scheme == "https" {
		tc := tls.Client(conn, &tls.Config{ServerName: u.Hostname(), MinVersion: tls.VersionTLS12})
		if err := tc.HandshakeContext(ctx); err != nil {
			_ = conn.Close()
			return nil, fmt.Errorf("reaching the proxy %s: %w", u.Redacted(), err)
		}
		conn = tc
	}
	if dl, ok := ctx.Deadline(); ok {
		_ = conn.SetDeadline(dl)
	}
	req := &http.Request{Method: http.MethodConnect, URL: &url.URL{Opaque: addr}, Host: addr, Header: http.Header{}}
	if u.User != nil {
		pw, _ := u.User.Password()
		req.Header.Set("Proxy-Authorization", "Basic "+base64.StdEncoding.EncodeToString([]byte(u.User.Username()+":"+pw)))
	}
	if err := req.Write(conn); err != nil {
		_ = conn.Close()
		return nil, fmt.Errorf("asking the proxy %s for a tunnel: %w", u.Redacted(), err)
	}
	br := bufio.NewReader(conn)
	resp, err := http.ReadResponse(br, req)
	if err != nil {
		_ = conn.Close()
		return nil, fmt.Errorf("asking the proxy %s for a tunnel: %w", u.Redacted(), err)
	}
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		_ = conn.Close()
		return nil, fmt.Errorf("the proxy %s refused a tunnel to %s: %s", u.Redacted(), addr, resp.Status)
	}
	if br.Buffered() > 0 {
		_ = conn.Close()
		return nil, fmt.Errorf("the proxy %s sent data before the tunnel", u.Redacted())
	}
	_ = conn.SetDeadline(time.Time{})
	return conn, nil
}
