public class Broken { DefaultMQPushConsumer c = new DefaultMQPushConsumer("GID_X"; void f( { c.subscribe("T", "a||b") 
