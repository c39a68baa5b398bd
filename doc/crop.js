/*
 * crop.js - doc/pictures.sh injects this after a report page's scripts:
 * the chart that the root element's data-crop selector names, with its
 * legend (the one after it, else its sweep's), alone on a white page, and
 * its size in data-crop-size ("W,H") for the screenshot's window.
 */
(function () {
	'use strict';

	var root = document.documentElement, chart = document.querySelector(root.getAttribute('data-crop'));
	if (!chart) {
		root.setAttribute('data-crop-size', 'none');
		return;
	}
	var next = chart.nextElementSibling, sweep = chart.closest('.sweep');
	var legend = next && next.classList.contains('legend') ? next : sweep && sweep.querySelector(':scope > .legend');
	var box = document.createElement('div');
	box.style.cssText = 'display: inline-block; padding: 6px 10px; background: #fff';
	box.appendChild(chart.cloneNode(true));
	if (legend)
		box.appendChild(legend.cloneNode(true));
	document.body.textContent = '';
	document.body.style.cssText = 'margin: 0; background: #fff';
	document.body.appendChild(box);
	var r = box.getBoundingClientRect();
	root.setAttribute('data-crop-size', Math.ceil(r.width) + ',' + Math.ceil(r.height));
})();
