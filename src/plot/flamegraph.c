/* plot/flamegraph.c - flame graph SVG: folded stacks merged into a tree, laid out with widths
 * proportional to samples (root at the bottom), frames coloured by name, with embedded
 * JavaScript: click a frame to zoom into it, "Search" highlights matching frames. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/binio.h"
#include "core/outfile.h"
#include "core/text.h"
#include "plot/flamegraph.h"

struct node {
	char *name;
	uint64_t value;
	struct node *child, *next;
};

static struct node *node_new(const char *name, size_t len)
{
	struct node *n = calloc(1, sizeof(*n));
	if (n && !(n->name = strndup(name, len))) {
		free(n);
		n = NULL;
	}
	return n;
}

static void node_free(struct node *n)
{
	while (n) {
		struct node *next = n->next;
		node_free(n->child);
		free(n->name);
		free(n);
		n = next;
	}
}

static int tree_add(struct node *root, const char *stack, uint64_t count)
{
	struct node *cur = root;
	root->value += count;
	for (const char *p = stack; *p;) {
		size_t l = strcspn(p, ";");
		struct node *c = cur->child, *last = NULL;
		for (; c; last = c, c = c->next)
			if (strlen(c->name) == l && !strncmp(c->name, p, l))
				break;
		if (!c) {
			if (!(c = node_new(p, l)))
				return -ENOMEM;
			if (last)
				last->next = c;
			else
				cur->child = c;
		}
		c->value += count;
		cur = c;
		p += l + (p[l] == ';');
	}
	return 0;
}

static int depth_of(const struct node *n)
{
	int d = 0;
	for (const struct node *c = n->child; c; c = c->next) {
		int k = depth_of(c);
		if (k > d)
			d = k;
	}
	return d + 1;
}

static void printfb(struct binbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void printfb(struct binbuf *b, const char *fmt, ...)
{
	char tmp[1024];
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(tmp, sizeof(tmp), fmt, ap);
	va_end(ap);
	if (n > 0)
		binbuf_put(b, tmp, (size_t)n < sizeof(tmp) ? (size_t)n : sizeof(tmp) - 1);
}

#define WIDTH 1200.0
#define FRAME_H 16
#define TOP 36

struct layout {
	struct binbuf *b;
	uint64_t total;
	int height;
};

static void emit(struct layout *L, const struct node *n, double x, int depth)
{
	double w = WIDTH * (double)n->value / (double)L->total;
	if (w < 0.1)
		return;
	double y = L->height - (depth + 1) * FRAME_H;
	uint64_t h = binio_fnv64(BINIO_FNV64_INIT, n->name, strlen(n->name));
	int r = 200 + (int)(h % 55), g = 60 + (int)((h >> 8) % 150), bl = (int)((h >> 16) % 60);
	printfb(L->b, "<g class=\"f\"><title>");
	text_xml_append(L->b, n->name);
	printfb(L->b, " (%llu samples, %.2f%%)</title><rect x=\"%.2f\" y=\"%.0f\" width=\"%.2f\" "
		"height=\"%d\" fill=\"rgb(%d,%d,%d)\" rx=\"2\"/><text x=\"%.2f\" y=\"%.0f\">",
		(unsigned long long)n->value, 100.0 * (double)n->value / (double)L->total, x, y, w,
		FRAME_H - 1, r, g, bl, x + 3, y + FRAME_H - 4);
	size_t maxc = w > 20 ? (size_t)((w - 6) / 7) : 0;
	if (maxc) {
		char lab[512];
		snprintf(lab, sizeof(lab), "%s", n->name);
		if (strlen(lab) > maxc) {
			lab[maxc > 2 ? maxc - 2 : 0] = 0;
			strcat(lab, "..");
		}
		text_xml_append(L->b, lab);
	}
	printfb(L->b, "</text></g>\n");
	double cx = x;
	for (const struct node *c = n->child; c; c = c->next) {
		emit(L, c, cx, depth + 1);
		cx += WIDTH * (double)c->value / (double)L->total;
	}
}

static const char script[] =
	"<script type=\"text/ecmascript\"><![CDATA[\n"
	"var W=1200;\n"
	"function frames(){return document.querySelectorAll('g.f');}\n"
	"function geom(g){var r=g.querySelector('rect');if(!r.hasAttribute('ox')){"
	"r.setAttribute('ox',r.getAttribute('x'));r.setAttribute('ow',r.getAttribute('width'));}"
	"return [parseFloat(r.getAttribute('ox')),parseFloat(r.getAttribute('ow')),parseFloat(r.getAttribute('y'))];}\n"
	"function zoom(g){var z=geom(g),zx=z[0],zw=z[1],zy=z[2];frames().forEach(function(f){"
	"var q=geom(f),r=f.querySelector('rect'),t=f.querySelector('text');"
	"var nx=(q[0]-zx)*W/zw,nw=q[1]*W/zw;var vis=q[2]<=zy&&nx+nw>0.05&&nx<W-0.05||q[2]>zy&&q[0]<=zx&&q[0]+q[1]>=zx+zw;"
	"if(q[2]>zy){nx=0;nw=W;}"
	"f.style.display=vis?'':'none';r.setAttribute('x',nx);r.setAttribute('width',nw);"
	"t.setAttribute('x',nx+3);var n=f.querySelector('title').textContent.replace(/ \\(\\d+ samples.*$/,'');"
	"var m=Math.floor((nw-6)/7);t.textContent=m<3?'':(n.length>m?n.substr(0,m-2)+'..':n);});"
	"document.getElementById('unzoom').style.display='';}\n"
	"function unzoom(){var r=root();if(r)zoom(r);document.getElementById('unzoom').style.display='none';}\n"
	"function root(){var best=null,by=-1;frames().forEach(function(f){var y=geom(f)[2];if(y>by){by=y;best=f;}});return best;}\n"
	"function search(){var term=prompt('Search frames (regular expression)');if(term===null)return;"
	"var re=new RegExp(term),tot=0,hit=0;frames().forEach(function(f){var r=f.querySelector('rect');"
	"if(!r.hasAttribute('of'))r.setAttribute('of',r.getAttribute('fill'));"
	"var n=f.querySelector('title').textContent.replace(/ \\(\\d+ samples.*$/,'');"
	"if(term&&re.test(n)){r.setAttribute('fill','rgb(230,0,230)');}else{r.setAttribute('fill',r.getAttribute('of'));}});"
	"document.getElementById('matched').textContent=term?'matched: '+term:'';}\n"
	"document.addEventListener('click',function(e){var g=e.target.closest?e.target.closest('g.f'):null;if(g)zoom(g);});\n"
	"]]></script>\n";

int flamegraph_write(const struct folded *f, const char *title, const char *path)
{
	struct node root = { .name = "all" };
	struct binbuf b;
	int err = 0;
	binbuf_init(&b);
	for (size_t i = 0; i < f->n && !err; i++)
		err = tree_add(&root, f->stacks[i], f->counts[i]);
	if (err)
		goto out;
	int depth = depth_of(&root);
	struct layout L = { .b = &b, .total = root.value ? root.value : 1,
			    .height = TOP + depth * FRAME_H + 10 };
	printfb(&b, "<?xml version=\"1.0\" standalone=\"no\"?>\n"
		"<svg version=\"1.1\" width=\"%d\" height=\"%d\" xmlns=\"http://www.w3.org/2000/svg\">\n"
		"<style>text{font:12px monospace;pointer-events:none}g.f:hover rect{stroke:#000;stroke-width:0.5}"
		".b{font:12px monospace;cursor:pointer;fill:#00c}</style>\n"
		"<rect width=\"100%%\" height=\"100%%\" fill=\"#f8f8f0\"/>\n<text x=\"600\" y=\"18\" "
		"text-anchor=\"middle\" style=\"font-size:16px\">", (int)WIDTH, L.height);
	text_xml_append(&b, title);
	printfb(&b, "</text>\n<text class=\"b\" x=\"10\" y=\"18\" id=\"unzoom\" onclick=\"unzoom()\" "
		"style=\"display:none;pointer-events:all\">Reset zoom</text>\n"
		"<text class=\"b\" x=\"1120\" y=\"18\" onclick=\"search()\" style=\"pointer-events:all\">Search</text>\n"
		"<text id=\"matched\" x=\"1000\" y=\"%d\"></text>\n", L.height - 2);
	binbuf_put(&b, script, sizeof(script) - 1);
	emit(&L, &root, 0, 0);
	err = binbuf_put(&b, "</svg>\n", 7);
	err = err ? err : export_write(path, b.data, b.len);
out:
	node_free(root.child);
	binbuf_release(&b);
	return err;
}
