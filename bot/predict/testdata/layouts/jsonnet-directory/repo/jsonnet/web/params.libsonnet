{
  image: 'nginx:1.27',
  replicas: { dev: 1, prod: 3 },
}
