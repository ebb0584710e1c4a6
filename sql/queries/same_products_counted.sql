-- same_products_counted: the rows of same_products on the last published day (none: the decay
-- rule judges product-age segments without their own products' change, feco.same_products).
-- Output: counted (a count of rows).
SELECT count(*) AS counted
FROM same_products
WHERE ds = (SELECT max(ds) FROM runs);
