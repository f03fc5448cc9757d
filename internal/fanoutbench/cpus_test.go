package fanoutbench

import (
	"slices"
	"testing"
)

func TestParseCPUList(t *testing.T) {
	tests := []struct {
		in   string
		want []int
		bad  bool
	}{
		{in: "0\n", want: []int{0}},
		{in: "0-1", want: []int{0, 1}},
		{in: "0-3,6", want: []int{0, 1, 2, 3, 6}},
		{in: " 2,4-5 \n", want: []int{2, 4, 5}},
		{in: "3-1", bad: true},
		{in: "a", bad: true},
		{in: "", bad: true},
	}
	for _, tt := range tests {
		got, err := parseCPUList(tt.in)
		if (err != nil) != tt.bad || !slices.Equal(got, tt.want) {
			t.Errorf("parseCPUList(%q) = %v, %v; want %v (error %v)", tt.in, got, err, tt.want, tt.bad)
		}
	}
}
