package fetch_test

import (
	"context"
	"errors"
	"fmt"

	"github.com/fedkit/fedkit/client"
	"github.com/fedkit/fedkit/fetch"
)

// ExampleWithBudget bounds the fetches one activity may cause.
func ExampleWithBudget() {
	b := fetch.NewBudget(fetch.BudgetDefault)
	ctx := fetch.WithBudget(context.Background(), b)
	// Every fetch made while handling this activity spends from b.
	fmt.Println(fetch.BudgetFrom(ctx).Remaining())
	// Output: 1000
}

// ExampleNewBudget shows an exhausted budget refusing the next fetch.
func ExampleNewBudget() {
	ctx := fetch.WithBudget(context.Background(), fetch.NewBudget(0))
	c, _ := client.New(nil)
	f, _ := fetch.New(c, nil)
	_, err := f.Lookup(ctx, "https://mastodon.example/users/alice")
	fmt.Println(errors.Is(err, fetch.ErrBudgetExhausted))
	// Output: true
}

// ExampleBudgetFrom reads what the budget of a context has left.
func ExampleBudgetFrom() {
	ctx := fetch.WithBudget(context.Background(), fetch.NewBudget(3))
	fmt.Println(fetch.BudgetFrom(ctx).Remaining(), fetch.BudgetFrom(context.Background()) == nil)
	// Output: 3 true
}
