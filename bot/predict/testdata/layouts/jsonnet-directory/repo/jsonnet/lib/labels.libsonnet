{
  of(name):: {
    'app.kubernetes.io/name': name,
    'app.kubernetes.io/part-of': std.extVar('team'),
  },
}
