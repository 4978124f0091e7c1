local labels = import 'labels.libsonnet';
local params = import 'params.libsonnet';

function(env='dev') [
  {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: 'web', labels: labels.of('web') },
    spec: {
      replicas: params.replicas[env],
      selector: { matchLabels: { app: 'web' } },
      template: {
        metadata: { labels: { app: 'web' } },
        spec: {
          containers: [{ name: 'web', image: params.image }],
        },
      },
    },
  },
]
