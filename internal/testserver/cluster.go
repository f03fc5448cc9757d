package testserver

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os/exec"
	"strconv"
	"strings"
	"time"
)

// Cluster is a Redis Cluster of three masters on loopback, no replicas, made
// by redis-cli --cluster create from redis-servers in cluster mode. Each
// node is a Server of its own, so a test can kill one.
type Cluster struct {
	// Nodes are the masters; Addrs their addresses, for a
	// redis.ClusterOptions or a redis.UniversalOptions.
	Nodes []*Server
	Addrs []string
}

// ClusterNodes is how many masters NewCluster starts.
const ClusterNodes = 3

// NewCluster starts a 3-master Redis Cluster and waits until every node
// reports cluster_state:ok. It needs redis-server and redis-cli. Call Close
// when done.
func NewCluster(ctx context.Context) (*Cluster, error) {
	cli := FindBinary("redis-cli")
	if cli == "" {
		return nil, errors.New("no redis-cli binary (Debian: redis-tools)")
	}
	c := &Cluster{}
	for i := 0; i < ClusterNodes; i++ {
		port, err := clusterPort()
		if err != nil {
			c.Close()
			return nil, err
		}
		// nodes.conf lives in the node's own --dir. The node timeout is the
		// shortest Redis allows in practice: a test that kills a node wants
		// the cluster to notice soon.
		s, err := newRedis(ctx, port, "--cluster-enabled", "yes", "--cluster-config-file", "nodes.conf",
			"--cluster-node-timeout", "2000")
		if err != nil {
			c.Close()
			return nil, err
		}
		c.Nodes = append(c.Nodes, s)
		c.Addrs = append(c.Addrs, s.Addr)
	}
	args := append([]string{"--cluster", "create"}, c.Addrs...)
	args = append(args, "--cluster-replicas", "0", "--cluster-yes")
	if out, err := exec.CommandContext(ctx, cli, args...).CombinedOutput(); err != nil {
		c.Close()
		return nil, fmt.Errorf("redis-cli --cluster create: %v: %s", err, out)
	}
	if err := c.waitOK(ctx, cli); err != nil {
		c.Close()
		return nil, err
	}
	return c, nil
}

// waitOK waits until every node agrees the cluster is up and knows all
// three masters: a client that arrives earlier may be told CLUSTERDOWN.
func (c *Cluster) waitOK(ctx context.Context, cli string) error {
	deadline := time.Now().Add(30 * time.Second)
	for {
		ok := true
		for _, n := range c.Nodes {
			host, port, _ := net.SplitHostPort(n.Addr)
			out, err := exec.CommandContext(ctx, cli, "-h", host, "-p", port, "cluster", "info").Output()
			if err != nil || !strings.Contains(string(out), "cluster_state:ok") ||
				!strings.Contains(string(out), "cluster_known_nodes:"+strconv.Itoa(ClusterNodes)) {
				ok = false
				break
			}
		}
		if ok {
			return nil
		}
		if time.Now().After(deadline) {
			return errors.New("redis cluster did not reach cluster_state:ok")
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// Close kills every node and removes their data.
func (c *Cluster) Close() {
	for _, n := range c.Nodes {
		n.Close()
	}
}

// clusterPort finds a free loopback port whose cluster bus port (port +
// 10000) is free too.
func clusterPort() (int, error) {
	for i := 0; i < 50; i++ {
		p, err := freePort()
		if err != nil {
			return 0, err
		}
		if p+10000 > 65535 {
			continue
		}
		l, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(p+10000))
		if err != nil {
			continue
		}
		l.Close()
		return p, nil
	}
	return 0, errors.New("no free port pair for a cluster node")
}
