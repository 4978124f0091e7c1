package drift

import "testing"

func TestSemanticallyEqual(t *testing.T) {
	tests := []struct {
		a, b any
		want SemanticKind
	}{
		{"1000m", "1", SameQuantity},
		{"1024Mi", "1Gi", SameQuantity},
		{"0.5", "500m", SameQuantity},
		{"1.5Gi", "1536Mi", SameQuantity},
		{"1e3", "1k", SameQuantity},
		{int64(2), "2000m", SameQuantity},
		{"8080", int64(8080), SameIntOrString},
		{"true", true, SameBool},
		{"8760h", "8760h0m0s", SameDuration},
		{"90m", "1h30m0s", SameDuration},
		{"1Gi", "1G", ""},
		{"100m", "1", ""},
		{"abc", "abd", ""},
		{"1", "1", ""}, // equal, not a re-spelling
	}
	for _, tt := range tests {
		got, ok := SemanticallyEqual(tt.a, tt.b)
		if got != tt.want || ok != (tt.want != "") {
			t.Errorf("SemanticallyEqual(%v, %v) = %q, %v; want %q", tt.a, tt.b, got, ok, tt.want)
		}
	}
}

func TestEqualNumbers(t *testing.T) {
	if !Equal(int64(2), 2.0) || Equal(int64(2), "2") || Equal(nil, false) {
		t.Fatal("Equal treats numbers or types wrongly")
	}
	if !Equal(map[string]any{"a": []any{int64(1)}}, map[string]any{"a": []any{1.0}}) {
		t.Fatal("Equal must compare nested numbers by value")
	}
}

func TestParseQuantityRejects(t *testing.T) {
	for _, s := range []string{"", "1.2.3", "1 Gi", "--1", "1Xi", "0x10", " 1", "1 "} {
		if _, ok := ParseQuantity(s); ok {
			t.Errorf("ParseQuantity(%q) accepted", s)
		}
	}
}

// TestParseQuantityAsStored checks that two quantities are the same value
// exactly where the API server stores them alike: precision below a nano
// rounds up, values past its range clamp, exponents and binary suffixes
// scale.
func TestParseQuantityAsStored(t *testing.T) {
	tests := []struct {
		a, b any
		same bool
	}{
		{"1000m", "1", true},
		{"1e3", "1k", true},
		{"1.5Gi", "1536Mi", true},
		{"0.1n", "1n", true}, // rounded up to a nano
		{"1.0000000001", "1000000001n", true},
		{"9Ei", "10Ei", true}, // both clamp to the largest quantity
		{"1e-40", "1n", true},
		{"1Ki", "1k", false},
		{"500m", 0.5, true},
		{"2", int64(2), true},
		{"1.5n", "2n", true},
		{"Mi", "0", true}, // the API server reads a suffix alone as zero
	}
	for _, tt := range tests {
		a, okA := ParseQuantity(tt.a)
		b, okB := ParseQuantity(tt.b)
		if !okA || !okB {
			t.Errorf("%v or %v not read as a quantity", tt.a, tt.b)
			continue
		}
		if (a.Cmp(b) == 0) != tt.same {
			t.Errorf("%v = %v and %v = %v: same %v, want %v", tt.a, a, tt.b, b, a.Cmp(b) == 0, tt.same)
		}
	}
}

func TestEditedText(t *testing.T) {
	tests := []struct {
		name      string
		git, live any
		want      bool
	}{
		{"a placeholder filled in", "url: db\npassword: $(x)\n", "url: db\npassword: s3cr3t\n", true},
		{"a line added", "url: db\n", "url: db\nproxy: p\n", true},
		{"every line replaced", "a: 1\nb: 2\n", "a: 3\nb: 4\n", false},
		{"one-line strings", "debug", "info", false},
		{"the same text", "a\nb\n", "a\nb\n", false},
		{"only blank lines in common", "a\n\n", "b\n\n", false},
		{"not strings", map[string]any{"a": "1\n2"}, "1\n2", false},
		{"a quantity", "1000m", "1", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := EditedText(tt.git, tt.live); got != tt.want {
				t.Errorf("EditedText(%q, %q) = %v, want %v", tt.git, tt.live, got, tt.want)
			}
		})
	}
}
