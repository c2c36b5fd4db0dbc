"""Deployment manifests: Kubernetes, Helm, Compose, Dockerfiles."""
