"""Bundled assets: the sample page (``sample_page.png``) and the script that renders it."""
