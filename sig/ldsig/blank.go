package ldsig

import (
	"fmt"

	"github.com/piprate/json-gold/ld"
)

// Bounds on the blank nodes URDNA2015 must tell apart. Its cost is
// linear while each blank node is told apart by its own statements, and
// grows factorially with groups of look-alike blank nodes linked to
// other look-alike blank nodes. Measured with json-gold on identical
// anonymous objects nested in identical anonymous objects: a 255-node
// binary tree (5 KB of JSON) takes 18 s, a 121-node ternary one 2.5 s,
// two copies of a 31-node tree whose root has 5 children with 5
// children each 41 s, a complete graph of 8 explicitly named blank nodes
// 11 s. Within the bounds below the worst we found costs about 50 ms.
// Real activities link a handful of blank nodes at most (an attachment
// and its focal point list, a poll option and its replies collection, a
// proof and its graph).
const (
	// maxTreeComponent bounds blank nodes linked to each other without a
	// cycle, as anonymous JSON objects and lists are.
	maxTreeComponent = 32
	// maxCyclicComponent bounds blank nodes linked with a cycle, which
	// only explicit blank node identifiers or shared undefined type
	// names produce. 5 of them, all linked to all, cost 9 ms; 8, 11 s.
	maxCyclicComponent = 5
	// maxLinkedBlankNodes bounds all blank nodes linked to another one.
	maxLinkedBlankNodes = 256
	// maxInnerBlankNodes bounds blank nodes linked to two or more blank
	// nodes (a blank node between blank nodes), where the costly
	// permutations happen.
	maxInnerBlankNodes = 8
	// maxInnerDegree bounds how many such inner blank nodes one blank
	// node links.
	maxInnerDegree = 4
)

// checkBlankNodes measures the graph of blank nodes that share a
// statement (subject, object or graph name) and refuses, with
// ErrTooComplex, any group the canonicaliser could take exponential time
// over.
func checkBlankNodes(ds *ld.RDFDataset) error {
	parent := map[string]string{}
	find := func(x string) string {
		for parent[x] != x {
			parent[x] = parent[parent[x]]
			x = parent[x]
		}
		return x
	}
	add := func(x string) {
		if _, ok := parent[x]; !ok {
			parent[x] = x
		}
	}
	type pair struct{ a, b string }
	edges := map[pair]bool{}
	link := func(a, b string) {
		if a == b {
			return
		}
		if a > b {
			a, b = b, a
		}
		if edges[pair{a, b}] {
			return
		}
		edges[pair{a, b}] = true
		parent[find(a)] = find(b)
	}
	for _, quads := range ds.Graphs {
		for _, q := range quads {
			var bs [3]string
			n := 0
			for _, node := range []ld.Node{q.Subject, q.Object, q.Graph} {
				if node != nil && ld.IsBlankNode(node) {
					bs[n] = node.GetValue()
					add(bs[n])
					n++
				}
			}
			for i := 0; i < n; i++ {
				for j := i + 1; j < n; j++ {
					link(bs[i], bs[j])
				}
			}
		}
	}
	nodes, links := map[string]int{}, map[string]int{}
	for x := range parent {
		nodes[find(x)]++
	}
	degree := map[string]int{}
	for e := range edges {
		links[find(e.a)]++
		degree[e.a]++
		degree[e.b]++
	}
	linked := 0
	for root, n := range nodes {
		if n < 2 {
			continue
		}
		linked += n
		cyclic := links[root] >= n
		switch {
		case cyclic && n > maxCyclicComponent:
			return fmt.Errorf("%w: %d blank nodes linked in a cycle", ErrTooComplex, n)
		case n > maxTreeComponent:
			return fmt.Errorf("%w: %d blank nodes linked together", ErrTooComplex, n)
		case linked > maxLinkedBlankNodes:
			return fmt.Errorf("%w: more than %d linked blank nodes", ErrTooComplex, maxLinkedBlankNodes)
		}
	}
	inner, innerDegree := 0, map[string]int{}
	for _, d := range degree {
		if d >= 2 {
			inner++
		}
	}
	if inner > maxInnerBlankNodes {
		return fmt.Errorf("%w: %d blank nodes between blank nodes", ErrTooComplex, inner)
	}
	for e := range edges {
		if degree[e.b] >= 2 {
			innerDegree[e.a]++
		}
		if degree[e.a] >= 2 {
			innerDegree[e.b]++
		}
	}
	for _, d := range innerDegree {
		if d > maxInnerDegree {
			return fmt.Errorf("%w: a blank node linking %d blank nodes between blank nodes", ErrTooComplex, d)
		}
	}
	return nil
}
