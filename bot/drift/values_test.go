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
	for _, s := range []string{"", "Mi", "1.2.3", "1 Gi", "--1", "1e999", "1Xi", "0x10"} {
		if _, ok := ParseQuantity(s); ok {
			t.Errorf("ParseQuantity(%q) accepted", s)
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
