"""What users install and deploy: the public surface of the package, the deploy files."""
